'''python-dbusmock template: power-profiles-daemon under its newer name
(org.freedesktop.UPower.PowerProfiles at /org/freedesktop/UPower/PowerProfiles, interface of the
same name, system bus), for python-dbusmock versions that lack the upstream template of this name.

Properties as power-profiles-daemon serves them: ActiveProfile (s), PerformanceDegraded (s),
Profiles (aa{sv}), Actions (as), ActiveProfileHolds (aa{sv}). Change ActiveProfile with
org.freedesktop.DBus.Properties.Set or Mock.UpdateProperties (both emit PropertiesChanged).

Parameters: ActiveProfile (default 'balanced'), PerformanceDegraded (default '').
'''

import dbus

BUS_NAME = 'org.freedesktop.UPower.PowerProfiles'
MAIN_OBJ = '/org/freedesktop/UPower/PowerProfiles'
MAIN_IFACE = 'org.freedesktop.UPower.PowerProfiles'
SYSTEM_BUS = True


def load(mock, parameters):
    profiles = [dbus.Dictionary({'Profile': name, 'Driver': 'dbusmock'}, signature='sv')
                for name in ('power-saver', 'balanced', 'performance')]
    mock.AddProperties(MAIN_IFACE, dbus.Dictionary({
        'ActiveProfile': parameters.get('ActiveProfile', 'balanced'),
        'PerformanceDegraded': parameters.get('PerformanceDegraded', ''),
        'Profiles': dbus.Array(profiles, signature='a{sv}'),
        'Actions': dbus.Array([], signature='s'),
        'ActiveProfileHolds': dbus.Array([], signature='a{sv}'),
    }, signature='sv'))
