"""A GTK 3 window whose Wayland app id is APP_ID, for the tests' headless KWin.

    gtk_window.py APP_ID

A Gtk.Application with the id APP_ID and one window. GTK 3 takes a window's Wayland app id from
the program's name (g_get_prgname), not from the application's id, so the name is set to APP_ID
first. Prints "mapped" once the window's first frame has been drawn and the compositor has
handled it (a round trip of the display after the frame), then "active" or "inactive" at once
and on each change of the window's focus as the compositor configures it (GTK's `is-active`),
and runs until killed.
"""
import sys

import gi

gi.require_version("Gdk", "3.0")
gi.require_version("Gtk", "3.0")
from gi.repository import Gdk, Gio, GLib, Gtk  # noqa: E402

app_id = sys.argv[1]
GLib.set_prgname(app_id)
app = Gtk.Application(application_id=app_id, flags=Gio.ApplicationFlags.NON_UNIQUE)


def activate(app):
    window = Gtk.ApplicationWindow(application=app, title=app_id)
    window.set_default_size(200, 100)
    clock_handler = None

    def after_paint(clock):
        clock.disconnect(clock_handler)
        GLib.idle_add(announce)

    def announce():
        Gdk.Display.get_default().sync()
        print("mapped", flush=True)
        tell_focus()
        window.connect("notify::is-active", lambda *_: tell_focus())
        return False

    def tell_focus():
        print("active" if window.is_active() else "inactive", flush=True)

    window.realize()
    clock_handler = window.get_window().get_frame_clock().connect("after-paint", after_paint)
    window.show_all()
    app.hold()


app.connect("activate", activate)
sys.exit(app.run([]))
