'''python-dbusmock template: the systemd user manager (org.freedesktop.systemd1 at
/org/freedesktop/systemd1, interface org.freedesktop.systemd1.Manager, session bus), as far as
freezing apps needs it.

Manager methods:
- GetUnit(s name) -> o: the unit's object path for a unit it was told about, else the error
  org.freedesktop.systemd1.NoSuchUnit.
- FreezeUnit(s name), ThawUnit(s name): write 1 (0) to the unit's cgroup.freeze, as systemd
  does, for a unit it was told about (NoSuchUnit otherwise).
Each is recorded in the mock's call log (org.freedesktop.DBus.Mock.GetCalls).

Units: the parameter 'units', a dictionary of unit names to their cgroup directories (the
directory whose cgroup.freeze is written), and the mock method
org.freedesktop.DBus.Mock.AddUnit(s name, s cgroup_directory).
'''

import os

import dbus

from dbusmock import MOCK_IFACE

BUS_NAME = 'org.freedesktop.systemd1'
MAIN_OBJ = '/org/freedesktop/systemd1'
MAIN_IFACE = 'org.freedesktop.systemd1.Manager'
SYSTEM_BUS = False

NO_SUCH_UNIT = 'org.freedesktop.systemd1.NoSuchUnit'


def unit_path(name):
    '''The unit's object path, escaped as systemd does (every byte but [A-Za-z0-9] as _xx).'''
    escaped = ''.join(c if (c.isascii() and c.isalnum()) else '_%02x' % b
                      for c, b in ((chr(b), b) for b in name.encode('utf-8')))
    return MAIN_OBJ + '/unit/' + escaped


def cgroup_of(mock, name):
    try:
        return mock.units[str(name)]
    except KeyError as error:
        raise dbus.exceptions.DBusException(f'Unit {name} not loaded.', name=NO_SUCH_UNIT) from error


def write_freeze(mock, name, value):
    directory = cgroup_of(mock, name)
    with open(os.path.join(directory, 'cgroup.freeze'), 'w', encoding='ascii') as file:
        file.write(value)


def get_unit(mock, name):
    cgroup_of(mock, name)
    return dbus.ObjectPath(unit_path(str(name)))


def freeze_unit(mock, name):
    write_freeze(mock, name, '1')


def thaw_unit(mock, name):
    write_freeze(mock, name, '0')


def load(mock, parameters):
    mock.units = {str(name): str(directory) for name, directory in parameters.get('units', {}).items()}
    mock.AddProperties(MAIN_IFACE, dbus.Dictionary({'Version': 'dbusmock'}, signature='sv'))
    mock.AddMethod(MAIN_IFACE, 'GetUnit', 's', 'o', get_unit)
    mock.AddMethod(MAIN_IFACE, 'FreezeUnit', 's', '', freeze_unit)
    mock.AddMethod(MAIN_IFACE, 'ThawUnit', 's', '', thaw_unit)


@dbus.service.method(MOCK_IFACE, in_signature='ss', out_signature='')
def AddUnit(self, name, cgroup_directory):
    '''Makes the unit `name`, whose cgroup is the directory `cgroup_directory`, known.'''
    self.units[str(name)] = str(cgroup_directory)
