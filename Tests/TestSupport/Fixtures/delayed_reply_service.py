#!/usr/bin/python3
"""A service whose answer comes late, for the lifecycle tests: owns BUS_NAME on the session bus,
and answers `org.notifybus.Test.Wait()` at `/org/notifybus/Test` SECONDS after it was called.

    delayed_reply_service.py BUS_NAME SECONDS

Prints `ready` once it owns the name, and `answered` (with a monotonic time in nanoseconds first)
each time it answers.
"""
import sys
import time

from gi.repository import Gio, GLib

INTERFACE = """
<node><interface name="org.notifybus.Test"><method name="Wait"/></interface></node>
"""


def main():
    name, seconds = sys.argv[1], float(sys.argv[2])
    info = Gio.DBusNodeInfo.new_for_xml(INTERFACE).interfaces[0]
    loop = GLib.MainLoop()

    def on_call(_connection, _sender, _path, _interface, _method, _parameters, invocation):
        def answer():
            invocation.return_value(None)
            print(time.monotonic_ns(), "answered", flush=True)
            return False

        GLib.timeout_add(int(seconds * 1000), answer)

    def on_bus(connection, _name):
        connection.register_object("/org/notifybus/Test", info, on_call, None, None)

    Gio.bus_own_name(
        Gio.BusType.SESSION, name, Gio.BusNameOwnerFlags.NONE, on_bus,
        lambda *_: print("ready", flush=True), lambda *_: loop.quit())
    loop.run()


if __name__ == "__main__":
    main()
