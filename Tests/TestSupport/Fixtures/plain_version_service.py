"""A plain libdbus service, the anchor of notifybusd's answer times behind large bodies.

dbus-python (libdbus) on a GLib main loop: it owns the name given as its argument and answers
`org.freedesktop.DBus.Properties.Get` of (`org.notifybus.Bus1`, `Version`) on
`/org/notifybus/Bus1` with the variant uint32 2, as notifybusd does. Every other method call is
answered `org.freedesktop.DBus.Error.UnknownMethod` from its header alone: its body is never
decoded into Python values, so what it costs is libdbus's (reading and validating the message),
the least any libdbus service pays. It talks to the session bus of its environment.
"""

import sys

import dbus
import dbus.lowlevel
import dbus.mainloop.glib
from gi.repository import GLib

NAME = sys.argv[1]
PATH = "/org/notifybus/Bus1"
INTERFACE = "org.notifybus.Bus1"

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()


def answer(connection, message):
    if message.get_type() != dbus.lowlevel.MESSAGE_TYPE_METHOD_CALL or message.get_destination() != NAME:
        return dbus.lowlevel.HANDLER_RESULT_NOT_YET_HANDLED
    if (message.get_path() == PATH and message.get_interface() == "org.freedesktop.DBus.Properties"
            and message.get_member() == "Get" and message.get_signature() == "ss"
            and message.get_args_list() == [INTERFACE, "Version"]):
        reply = dbus.lowlevel.MethodReturnMessage(message)
        reply.append(dbus.UInt32(2, variant_level=1), signature="v")
    else:
        reply = dbus.lowlevel.ErrorMessage(
            message, "org.freedesktop.DBus.Error.UnknownMethod",
            "%s.%s on %s" % (message.get_interface(), message.get_member(), message.get_path()))
    connection.send_message(reply)
    return dbus.lowlevel.HANDLER_RESULT_HANDLED


bus.add_message_filter(answer)
if bus.request_name(NAME, dbus.bus.NAME_FLAG_DO_NOT_QUEUE) != dbus.bus.REQUEST_NAME_REPLY_PRIMARY_OWNER:
    sys.exit("cannot own " + NAME)
GLib.MainLoop().run()
