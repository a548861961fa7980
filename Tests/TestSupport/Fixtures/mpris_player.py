'''python-dbusmock template: an MPRIS media player (org.mpris.MediaPlayer2.test, or the name in
the environment variable NOTIFYBUS_MOCK_BUS_NAME, at /org/mpris/MediaPlayer2, session bus).

Properties of org.mpris.MediaPlayer2 (Identity, CanQuit, CanRaise, HasTrackList,
SupportedUriSchemes, SupportedMimeTypes) and of org.mpris.MediaPlayer2.Player (PlaybackStatus,
CanPlay, CanPause, CanControl). Change PlaybackStatus (to any type) with
org.freedesktop.DBus.Properties.Set or Mock.UpdateProperties: both emit PropertiesChanged.

Parameters: PlaybackStatus (default 'Stopped'; any JSON value, e.g. a number for a player that
sends a wrong type), Identity (default 'dbusmock player').
'''

import os

import dbus

BUS_NAME = os.environ.get('NOTIFYBUS_MOCK_BUS_NAME') or 'org.mpris.MediaPlayer2.test'
MAIN_OBJ = '/org/mpris/MediaPlayer2'
MAIN_IFACE = 'org.mpris.MediaPlayer2'
PLAYER_IFACE = 'org.mpris.MediaPlayer2.Player'
SYSTEM_BUS = False


def load(mock, parameters):
    mock.AddProperties(MAIN_IFACE, dbus.Dictionary({
        'Identity': parameters.get('Identity', 'dbusmock player'),
        'CanQuit': False,
        'CanRaise': False,
        'HasTrackList': False,
        'SupportedUriSchemes': dbus.Array([], signature='s'),
        'SupportedMimeTypes': dbus.Array([], signature='s'),
    }, signature='sv'))
    mock.AddProperties(PLAYER_IFACE, dbus.Dictionary({
        'PlaybackStatus': parameters.get('PlaybackStatus', 'Stopped'),
        'CanPlay': True,
        'CanPause': True,
        'CanControl': True,
    }, signature='sv'))
