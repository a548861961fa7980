#!/usr/bin/python3
"""A real GApplication for the lifecycle tests: a Gtk.Application whose id is its bus name and its
window's Wayland app id, as every GNOME and Phosh app is.

    gtk_app.py APP_ID [--raise COMMAND...]

- `activate` (`gapplication launch APP_ID`, or `org.freedesktop.Application.Activate`) opens the
  window the first time, and afterwards raises it by running the `--raise` command (the test's
  way of giving the window the focus on its compositor), then prints `activated`.
- The actions `ping` (`gapplication action APP_ID ping`) prints `action ping`; `call-slow(s)`
  calls `Wait` on the bus name given as its parameter (a `delayed_reply_service.py`), and prints
  `reply` when its answer comes.
- A signal `org.notifybus.Test.Ping` received on any path prints `signal Ping`.
Each line is flushed with a monotonic time in nanoseconds: `<ns> <what>`.
"""
import subprocess
import sys
import time

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gio, GLib, Gtk  # noqa: E402


def say(what):
    print(time.monotonic_ns(), what, flush=True)


def main():
    app_id = sys.argv[1]
    raise_command = sys.argv[sys.argv.index("--raise") + 1:] if "--raise" in sys.argv else []
    # GTK 3 names the window's Wayland app id after the program's name.
    GLib.set_prgname(app_id)
    app = Gtk.Application(application_id=app_id, flags=Gio.ApplicationFlags.DEFAULT_FLAGS)
    state = {"window": None}

    def on_activate(application):
        if state["window"] is None:
            window = Gtk.ApplicationWindow(application=application, title=app_id)
            window.set_default_size(200, 100)
            window.show_all()
            state["window"] = window
        elif raise_command:
            subprocess.run(raise_command, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        state["window"].present()
        say("activated")

    def on_ping(_action, _parameter):
        say("action ping")

    def on_call_slow(_action, parameter):
        name = parameter.get_string()

        def done(connection, result):
            try:
                connection.call_finish(result)
                say("reply")
            except GLib.Error as error:
                say("reply-error " + error.message)

        app.get_dbus_connection().call(
            name, "/org/notifybus/Test", "org.notifybus.Test", "Wait", None, None, Gio.DBusCallFlags.NONE, 60000,
            None, done)
        say("called")

    ping = Gio.SimpleAction.new("ping", None)
    ping.connect("activate", on_ping)
    app.add_action(ping)
    slow = Gio.SimpleAction.new("call-slow", GLib.VariantType.new("s"))
    slow.connect("activate", on_call_slow)
    app.add_action(slow)
    app.connect("activate", on_activate)

    def on_startup(application):
        application.get_dbus_connection().signal_subscribe(
            None, "org.notifybus.Test", "Ping", None, None, Gio.DBusSignalFlags.NONE,
            lambda *args: say("signal Ping"))
        application.hold()
        say("unique " + application.get_dbus_connection().get_unique_name())

    app.connect("startup", on_startup)
    sys.exit(app.run([sys.argv[0]]))


if __name__ == "__main__":
    main()
