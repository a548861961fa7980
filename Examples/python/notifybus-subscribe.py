#!/usr/bin/python3
"""Subscribe to notifybusd over D-Bus (Gio) and print each event as one JSON line.

    notifybus-subscribe.py [PATTERN...] [--policy P] [--limit N] [--initial] [--no-follow-freezer]

The lines are notifywatch's JSON lines (`notification`, `suspended`, `resumed`, `resync`), each
with `subscriber` set to the subscription's object path and a notification's `kind`; the first
line is {"type": "subscribed", "subscription": PATH, "pid": PID}. Values are parsed from their
JSON text, so numbers keep their form. Each element carries `seq` (1, 2, 3, ... per
subscription): when one is missing (the bus dropped a signal this process did not read in time),
the client calls Resync, and the daemon sends a `resync` line and every current value. SIGUSR1 sends Suspend and SIGUSR2 Resume; SIGINT and SIGTERM
cancel the subscription and exit 0. Frozen by the cgroup freezer or stopped (SIGSTOP), it needs
to do nothing: the daemon holds its notifications, and on thaw one Events signal brings the
`suspended` and `resumed` lines and the flush.

The session bus is $DBUS_SESSION_BUS_ADDRESS. Needs python3-gi (Debian).
"""
import argparse
import json
import os
import signal
import sys

from gi.repository import Gio, GLib

BUS_NAME = "org.notifybus.Bus1"
BUS_PATH = "/org/notifybus/Bus1"
BUS_INTERFACE = "org.notifybus.Bus1"
SUBSCRIPTION_INTERFACE = "org.notifybus.Subscription1"


def emit(line):
    sys.stdout.write(json.dumps(line, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def element_to_line(element, path):
    line = {"type": element.get("type"), "t": element.get("t")}
    if "time" in element:
        line["time"] = element["time"]
    line["subscriber"] = path
    for field in ("key", "coalesced", "flushed", "reason", "kind"):
        if field in element:
            line[field] = element[field]
    for field in ("value", "previous"):
        if field in element:
            line[field] = json.loads(element[field])
    return line


def main():
    parser = argparse.ArgumentParser(description="Subscribe to notifybusd and print JSON lines.")
    parser.add_argument("patterns", nargs="*")
    parser.add_argument("--policy", default=None)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--initial", action="store_true", help="the current values first")
    parser.add_argument("--no-follow-freezer", action="store_true")
    args = parser.parse_args()

    connection = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    loop = GLib.MainLoop()
    path_holder = {}
    next_seq = {}

    def on_events(_connection, _sender, path, _interface, _member, parameters):
        if path_holder.get("path") not in (None, path):
            return
        elements = parameters.unpack()[0]
        seqs = [element["seq"] for element in elements if "seq" in element]
        if seqs:
            if seqs[0] != next_seq.get(path, 1):
                # Elements are missing: ask for every current value again.
                connection.call(BUS_NAME, path, SUBSCRIPTION_INTERFACE, "Resync", None, None,
                                Gio.DBusCallFlags.NONE, -1, None, None)
            next_seq[path] = seqs[-1] + 1
        for element in elements:
            emit(element_to_line(element, path))

    # Subscribed to the signal before the call: the first Events may follow the reply at once.
    connection.signal_subscribe(
        BUS_NAME, SUBSCRIPTION_INTERFACE, "Events", None, None, Gio.DBusSignalFlags.NONE, on_events)

    options = {"follow-freezer": GLib.Variant("b", not args.no_follow_freezer)}
    if args.policy:
        options["policy"] = GLib.Variant("s", args.policy)
    if args.limit is not None:
        options["limit"] = GLib.Variant("u", args.limit)
    if args.initial:
        options["initial"] = GLib.Variant("s", "current")
    try:
        reply = connection.call_sync(
            BUS_NAME, BUS_PATH, BUS_INTERFACE, "Subscribe",
            GLib.Variant("(asa{sv})", (args.patterns, options)), GLib.VariantType("(o)"),
            Gio.DBusCallFlags.NONE, 10000, None)
    except GLib.Error as error:
        sys.stderr.write("notifybus-subscribe: %s\n" % error.message)
        return 69
    path = reply.unpack()[0]
    path_holder["path"] = path

    def call(member):
        connection.call(BUS_NAME, path, SUBSCRIPTION_INTERFACE, member, None, None,
                        Gio.DBusCallFlags.NONE, -1, None, None)
        return GLib.SOURCE_CONTINUE

    def stop():
        try:
            connection.call_sync(BUS_NAME, path, SUBSCRIPTION_INTERFACE, "Cancel", None, None,
                                 Gio.DBusCallFlags.NONE, 2000, None)
        except GLib.Error:
            pass
        loop.quit()
        return GLib.SOURCE_REMOVE

    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR1, call, "Suspend")
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR2, call, "Resume")
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, stop)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGINT, stop)
    connection.connect("closed", lambda *_: loop.quit())
    # Said once the signal handlers are in place, so a signal sent after it is handled.
    emit({"type": "subscribed", "subscription": path, "pid": os.getpid()})
    loop.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
