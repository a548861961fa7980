#ifndef NOTIFYBUS_CDBUS_SHIM_H
#define NOTIFYBUS_CDBUS_SHIM_H

// libdbus-1, for the DBus module. Debian/Ubuntu: libdbus-1-dev (pkg-config dbus-1).
#include <dbus/dbus.h>

// libdbus's type codes are macros with casts ((int) 'y'), which Swift does not import:
// re-export them as constants.
static const int NOTIFYBUS_DBUS_TYPE_INVALID = DBUS_TYPE_INVALID;
static const int NOTIFYBUS_DBUS_TYPE_BYTE = DBUS_TYPE_BYTE;
static const int NOTIFYBUS_DBUS_TYPE_BOOLEAN = DBUS_TYPE_BOOLEAN;
static const int NOTIFYBUS_DBUS_TYPE_INT16 = DBUS_TYPE_INT16;
static const int NOTIFYBUS_DBUS_TYPE_UINT16 = DBUS_TYPE_UINT16;
static const int NOTIFYBUS_DBUS_TYPE_INT32 = DBUS_TYPE_INT32;
static const int NOTIFYBUS_DBUS_TYPE_UINT32 = DBUS_TYPE_UINT32;
static const int NOTIFYBUS_DBUS_TYPE_INT64 = DBUS_TYPE_INT64;
static const int NOTIFYBUS_DBUS_TYPE_UINT64 = DBUS_TYPE_UINT64;
static const int NOTIFYBUS_DBUS_TYPE_DOUBLE = DBUS_TYPE_DOUBLE;
static const int NOTIFYBUS_DBUS_TYPE_STRING = DBUS_TYPE_STRING;
static const int NOTIFYBUS_DBUS_TYPE_OBJECT_PATH = DBUS_TYPE_OBJECT_PATH;
static const int NOTIFYBUS_DBUS_TYPE_SIGNATURE = DBUS_TYPE_SIGNATURE;
static const int NOTIFYBUS_DBUS_TYPE_UNIX_FD = DBUS_TYPE_UNIX_FD;
static const int NOTIFYBUS_DBUS_TYPE_ARRAY = DBUS_TYPE_ARRAY;
static const int NOTIFYBUS_DBUS_TYPE_VARIANT = DBUS_TYPE_VARIANT;
static const int NOTIFYBUS_DBUS_TYPE_STRUCT = DBUS_TYPE_STRUCT;
static const int NOTIFYBUS_DBUS_TYPE_DICT_ENTRY = DBUS_TYPE_DICT_ENTRY;

static const int NOTIFYBUS_DBUS_MESSAGE_TYPE_METHOD_CALL = DBUS_MESSAGE_TYPE_METHOD_CALL;
static const int NOTIFYBUS_DBUS_MESSAGE_TYPE_METHOD_RETURN = DBUS_MESSAGE_TYPE_METHOD_RETURN;
static const int NOTIFYBUS_DBUS_MESSAGE_TYPE_ERROR = DBUS_MESSAGE_TYPE_ERROR;
static const int NOTIFYBUS_DBUS_MESSAGE_TYPE_SIGNAL = DBUS_MESSAGE_TYPE_SIGNAL;

static const int NOTIFYBUS_DBUS_TIMEOUT_INFINITE = DBUS_TIMEOUT_INFINITE;
static const int NOTIFYBUS_DBUS_TIMEOUT_USE_DEFAULT = DBUS_TIMEOUT_USE_DEFAULT;

// The length in bytes of the array at `iter`, as marshalled: what a message's body size is
// added up from without reading the array's elements. libdbus marks
// `dbus_message_iter_get_array_len` deprecated (few callers want bytes rather than elements);
// this wrapper keeps the deprecation out of the Swift build.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static inline int notifybus_dbus_message_iter_get_array_len(DBusMessageIter *iter) {
    return dbus_message_iter_get_array_len(iter);
}
#pragma GCC diagnostic pop

#endif
