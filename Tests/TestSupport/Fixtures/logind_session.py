'''python-dbusmock template: systemd-logind (python-dbusmock's `logind` template) with one
session, `c1` (seat0, uid 0), in place from the start, and a GetSessionByPID that names it for
every process: a daemon started before the mock finds its session as soon as logind appears.

Lock and unlock the session with org.freedesktop.login1.Session.SetLockedHint(b) on
/org/freedesktop/login1/session/c1 (it emits PropertiesChanged of LockedHint).
'''

import dbus
from dbusmock.templates import logind
from dbusmock.templates.logind import *  # noqa: F401,F403 (the template's D-Bus methods)

SESSION = 'c1'


def load(mock, parameters):
    logind.load(mock, parameters)
    mock.AddSession(SESSION, 'seat0', dbus.UInt32(0), 'root', True)
    mock.AddMethod(logind.MAIN_IFACE, 'GetSessionByPID', 'u', 'o',
                   f'ret = dbus.ObjectPath("/org/freedesktop/login1/session/{SESSION}")')
