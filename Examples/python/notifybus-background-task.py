#!/usr/bin/python3
"""Finish some work in the background with the time notifybusd grants (Gio), as iOS's
beginBackgroundTask: while the task is open, `notifybusd --freeze-background` does not freeze
this app's cgroup.

    notifybus-background-task.py [--reason TEXT] [--seconds S] [--tasks N]

Begins N background tasks (default 1) with `BeginBackgroundTask(reason)`, works for S seconds
(default 10; 0: until SIGINT or SIGTERM), then ends them with `EndBackgroundTask` and exits 0.
One JSON line per step on standard output:
  {"type": "task", "task": N, "seconds": GRANTED}      a task begun
  {"type": "refused", "error": NAME, "message": TEXT}  a task the daemon refused
  {"type": "expiring", "task": N, "seconds": LEFT}     the grant runs out soon (then it ends by itself)
  {"type": "ended", "task": N}                         ended by this program
  {"type": "not-ended", "task": N, "error": NAME}      it had ended already (it ran out)

The session bus is $DBUS_SESSION_BUS_ADDRESS. Needs python3-gi (Debian).
"""
import argparse
import json
import signal
import sys

from gi.repository import Gio, GLib

BUS_NAME = "org.notifybus.Bus1"
BUS_PATH = "/org/notifybus/Bus1"
LIFECYCLE_INTERFACE = "org.notifybus.Lifecycle1"


def emit(line):
    sys.stdout.write(json.dumps(line, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description="Work in a notifybusd background task.")
    parser.add_argument("--reason", default="finishing work")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--tasks", type=int, default=1)
    args = parser.parse_args()

    connection = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    loop = GLib.MainLoop()
    tasks = []

    def on_expiring(_connection, _sender, _path, _interface, _signal, parameters):
        task, seconds = parameters.unpack()
        emit({"type": "expiring", "task": task, "seconds": seconds})

    # Listened for before the first call: a grant shorter than the warning is warned of at once.
    connection.signal_subscribe(
        BUS_NAME, LIFECYCLE_INTERFACE, "BackgroundTaskExpiring", BUS_PATH, None, Gio.DBusSignalFlags.NONE, on_expiring)

    for _ in range(args.tasks):
        try:
            reply = connection.call_sync(
                BUS_NAME, BUS_PATH, LIFECYCLE_INTERFACE, "BeginBackgroundTask", GLib.Variant("(s)", (args.reason,)),
                GLib.VariantType.new("(uu)"), Gio.DBusCallFlags.NONE, 10000, None)
        except GLib.Error as error:
            emit({"type": "refused", "error": Gio.DBusError.get_remote_error(error), "message": error.message})
            continue
        task, seconds = reply.unpack()
        tasks.append(task)
        emit({"type": "task", "task": task, "seconds": seconds})

    def finish(*_):
        for task in tasks:
            try:
                connection.call_sync(
                    BUS_NAME, BUS_PATH, LIFECYCLE_INTERFACE, "EndBackgroundTask", GLib.Variant("(u)", (task,)),
                    None, Gio.DBusCallFlags.NONE, 10000, None)
                emit({"type": "ended", "task": task})
            except GLib.Error as error:
                emit({"type": "not-ended", "task": task, "error": Gio.DBusError.get_remote_error(error)})
        loop.quit()
        return False

    for number in (signal.SIGINT, signal.SIGTERM):
        GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, number, finish)
    if args.seconds > 0:
        GLib.timeout_add(int(args.seconds * 1000), finish)
    loop.run()


if __name__ == "__main__":
    main()
