'''python-dbusmock template: the XDG desktop portal's Settings interface (session bus).

org.freedesktop.portal.Desktop at /org/freedesktop/portal/desktop, interface
org.freedesktop.portal.Settings, as Tests/README.md, "The portal, headless", describes it:
* property version (u): parameter version, 1 (xdg-desktop-portal 1.16) or 2 (>= 1.18).
* ReadAll(as namespaces) -> a{sa{sv}}: [] is all; a trailing * is a prefix glob.
* Read(s, s) -> v: the value double-wrapped (a variant in the variant), as portals do.
* ReadOne(s, s) -> v: version 2 only; version 1 answers UnknownMethod.
* Unknown namespace/key: org.freedesktop.portal.Error.NotFound.
* SettingChanged(s namespace, s key, v value).
Test controls on org.freedesktop.DBus.Mock:
* SetSetting(s, s, v): stores; emits SettingChanged only when the value changed.
* EmitSetting(s, s, v): emits SettingChanged without storing.
'''

import dbus
from dbusmock import MOCK_IFACE

BUS_NAME = 'org.freedesktop.portal.Desktop'
MAIN_OBJ = '/org/freedesktop/portal/desktop'
MAIN_IFACE = 'org.freedesktop.portal.Settings'
SYSTEM_BUS = False

NOT_FOUND = 'org.freedesktop.portal.Error.NotFound'


def load(mock, parameters):
    mock.portal_version = int(parameters.get('version', 2))
    mock.settings = {
        'org.freedesktop.appearance': {
            'color-scheme': dbus.UInt32(0),
        },
        'org.gnome.desktop.interface': {
            'color-scheme': dbus.String('default'),
            'gtk-theme': dbus.String('Adwaita'),
            'text-scaling-factor': dbus.Double(1.25),
            'enable-animations': dbus.Boolean(True),
            'cursor-size': dbus.Int32(24),
        },
        'org.gnome.desktop.a11y': {
            'always-show-text-caret': dbus.Boolean(False),
        },
    }
    if mock.portal_version >= 2:
        mock.settings['org.freedesktop.appearance']['accent-color'] = dbus.Struct(
            (dbus.Double(0.25), dbus.Double(0.5), dbus.Double(1.0)), signature='ddd')
        mock.settings['org.freedesktop.appearance']['contrast'] = dbus.UInt32(0)
    mock.AddProperties(MAIN_IFACE, {'version': dbus.UInt32(mock.portal_version)})


def plain(value):
    '''The value without variant wrapping (dbus-python keeps it in variant_level).'''
    if isinstance(value, dbus.Struct):
        return dbus.Struct(value, signature=value.signature)
    if isinstance(value, dbus.Array):
        return dbus.Array(value, signature=value.signature)
    if isinstance(value, dbus.Dictionary):
        return dbus.Dictionary(value, signature=value.signature)
    return type(value)(value)


def wrapped(value, level):
    if isinstance(value, (dbus.Struct, dbus.Array, dbus.Dictionary)):
        return type(value)(value, signature=value.signature, variant_level=level)
    return type(value)(value, variant_level=level)


def matches(namespace, patterns):
    if not patterns:
        return True
    for pattern in patterns:
        pattern = str(pattern)
        if pattern.endswith('*') and namespace.startswith(pattern[:-1]):
            return True
        if pattern == namespace:
            return True
    return False


def lookup(self, namespace, key):
    try:
        return self.settings[str(namespace)][str(key)]
    except KeyError:
        raise dbus.exceptions.DBusException('Requested setting not found', name=NOT_FOUND) from None


@dbus.service.method(MAIN_IFACE, in_signature='as', out_signature='a{sa{sv}}')
def ReadAll(self, namespaces):
    result = dbus.Dictionary({}, signature='sa{sv}')
    for namespace, values in self.settings.items():
        if matches(namespace, namespaces):
            result[namespace] = dbus.Dictionary(values, signature='sv')
    return result


@dbus.service.method(MAIN_IFACE, in_signature='ss', out_signature='v')
def Read(self, namespace, key):
    return wrapped(lookup(self, namespace, key), 2)


@dbus.service.method(MAIN_IFACE, in_signature='ss', out_signature='v')
def ReadOne(self, namespace, key):
    if self.portal_version < 2:
        raise dbus.exceptions.DBusException(
            'No such method “ReadOne”', name='org.freedesktop.DBus.Error.UnknownMethod')
    return lookup(self, namespace, key)


def emit(self, namespace, key, value):
    self.EmitSignal(MAIN_IFACE, 'SettingChanged', 'ssv', [namespace, key, wrapped(plain(value), 1)])


@dbus.service.method(MOCK_IFACE, in_signature='ssv', out_signature='')
def SetSetting(self, namespace, key, value):
    value = plain(value)
    old = self.settings.get(str(namespace), {}).get(str(key))
    if old is not None and old == value and type(old) is type(value):
        return
    self.settings.setdefault(str(namespace), {})[str(key)] = value
    emit(self, str(namespace), str(key), value)


@dbus.service.method(MOCK_IFACE, in_signature='ssv', out_signature='')
def EmitSetting(self, namespace, key, value):
    emit(self, str(namespace), str(key), plain(value))
