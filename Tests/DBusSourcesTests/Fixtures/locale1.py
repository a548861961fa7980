'''python-dbusmock template: a systemd-localed stand-in (org.freedesktop.locale1, system bus).

Mirrors what Tests/README.md, "localed and timedated", says of systemd-localed 252:
* Locale (as), X11*/VConsole* (s) properties, all read-only.
* SetLocale(as, b): merge semantics (variables not passed are kept), an LC_* equal to LANG is
  dropped, a bare value means LANG=value, unknown variables raise InvalidArgs, and
  PropertiesChanged('org.freedesktop.locale1', {'Locale': <as>}, []) is emitted before the reply,
  only when the value changed. The new value is written to the locale file.
* The locale file (parameter locale_file) is re-read on Get/GetAll when its mtime changed,
  without a signal (edits behind localed's back).
* Optional idle exit (parameter idle_exit, seconds without calls): the process exits like
  localed does after ~30 s; with a .service file it is bus-activated again.

Parameters: locale (list of NAME=value), locale_file (path), idle_exit (seconds).
'''

import os

import dbus
from gi.repository import GLib

BUS_NAME = 'org.freedesktop.locale1'
MAIN_OBJ = '/org/freedesktop/locale1'
MAIN_IFACE = 'org.freedesktop.locale1'
SYSTEM_BUS = True

VARIABLES = ['LANG', 'LANGUAGE', 'LC_CTYPE', 'LC_NUMERIC', 'LC_TIME', 'LC_COLLATE', 'LC_MONETARY',
             'LC_MESSAGES', 'LC_PAPER', 'LC_NAME', 'LC_ADDRESS', 'LC_TELEPHONE', 'LC_MEASUREMENT',
             'LC_IDENTIFICATION']


def load(mock, parameters):
    mock.locale_file = parameters.get('locale_file', '')
    mock.locale_mtime = None
    mock.idle_exit = float(parameters.get('idle_exit', 0))
    mock.idle_source = None
    mock.AddProperties(MAIN_IFACE, {
        'Locale': dbus.Array(parameters.get('locale', ['LANG=C.UTF-8']), signature='s'),
        'X11Layout': '', 'X11Model': '', 'X11Variant': '', 'X11Options': '',
        'VConsoleKeymap': '', 'VConsoleKeymapToggle': '',
    })
    refresh_from_file(mock)
    touch(mock)


def touch(mock):
    if mock.idle_exit <= 0:
        return
    if mock.idle_source is not None:
        GLib.source_remove(mock.idle_source)
    mock.idle_source = GLib.timeout_add(int(mock.idle_exit * 1000), lambda: os._exit(0))


def parse(text):
    entries = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        if line.startswith('export '):
            line = line[len('export '):]
        if '=' in line:
            name, value = line.split('=', 1)
            if len(value) >= 2 and value[0] in '"\'' and value[-1] == value[0]:
                value = value[1:-1]
            entries.append(f'{name}={value}')
    return entries


def refresh_from_file(mock):
    if not mock.locale_file or not os.path.exists(mock.locale_file):
        return
    mtime = os.stat(mock.locale_file).st_mtime_ns
    if mtime == mock.locale_mtime:
        return
    mock.locale_mtime = mtime
    with open(mock.locale_file, encoding='utf-8') as f:
        mock.props[MAIN_IFACE]['Locale'] = dbus.Array(parse(f.read()), signature='s')


@dbus.service.method(dbus.PROPERTIES_IFACE, in_signature='s', out_signature='a{sv}')
def GetAll(self, interface):
    touch(self)
    if interface == MAIN_IFACE:
        refresh_from_file(self)
    return dbus.Dictionary(self.props.get(interface, {}), signature='sv')


@dbus.service.method(MAIN_IFACE, in_signature='asb', out_signature='')
def SetLocale(self, locale, _interactive):
    touch(self)
    refresh_from_file(self)
    current = {}
    for entry in self.props[MAIN_IFACE]['Locale']:
        name, value = str(entry).split('=', 1)
        current[name] = value
    for entry in locale:
        entry = str(entry)
        if '=' not in entry:
            entry = 'LANG=' + entry
        name, value = entry.split('=', 1)
        if name not in VARIABLES or not value:
            raise dbus.exceptions.DBusException(
                f'Locale assignment {entry} not valid, refusing.', name='org.freedesktop.DBus.Error.InvalidArgs')
        current[name] = value
    lang = current.get('LANG')
    new = [f'{n}={current[n]}' for n in VARIABLES
           if n in current and (n == 'LANG' or not n.startswith('LC_') or current[n] != lang)]
    if new == [str(e) for e in self.props[MAIN_IFACE]['Locale']]:
        return
    value = dbus.Array(new, signature='s')
    self.props[MAIN_IFACE]['Locale'] = value
    if self.locale_file:
        with open(self.locale_file + '.tmp', 'w', encoding='utf-8') as f:
            f.write(''.join(e + '\n' for e in new))
        os.rename(self.locale_file + '.tmp', self.locale_file)
        self.locale_mtime = os.stat(self.locale_file).st_mtime_ns
    self.EmitSignal(dbus.PROPERTIES_IFACE, 'PropertiesChanged', 'sa{sv}as',
                    [MAIN_IFACE, dbus.Dictionary({'Locale': value}, signature='sv'), dbus.Array([], signature='s')])
