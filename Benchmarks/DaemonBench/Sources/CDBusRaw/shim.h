#include <dbus/dbus.h>

// libdbus's type codes are macros with casts, which Swift does not import.
static const int RAW_DBUS_TYPE_INVALID = DBUS_TYPE_INVALID;
static const int RAW_DBUS_TYPE_BOOLEAN = DBUS_TYPE_BOOLEAN;
static const int RAW_DBUS_TYPE_INT32 = DBUS_TYPE_INT32;
static const int RAW_DBUS_TYPE_UINT32 = DBUS_TYPE_UINT32;
static const int RAW_DBUS_TYPE_INT64 = DBUS_TYPE_INT64;
static const int RAW_DBUS_TYPE_DOUBLE = DBUS_TYPE_DOUBLE;
static const int RAW_DBUS_TYPE_STRING = DBUS_TYPE_STRING;
static const int RAW_DBUS_TYPE_OBJECT_PATH = DBUS_TYPE_OBJECT_PATH;
static const int RAW_DBUS_TYPE_ARRAY = DBUS_TYPE_ARRAY;
static const int RAW_DBUS_TYPE_VARIANT = DBUS_TYPE_VARIANT;
static const int RAW_DBUS_TYPE_STRUCT = DBUS_TYPE_STRUCT;
static const int RAW_DBUS_TYPE_DICT_ENTRY = DBUS_TYPE_DICT_ENTRY;

static const int RAW_DBUS_MESSAGE_TYPE_METHOD_CALL = DBUS_MESSAGE_TYPE_METHOD_CALL;
static const int RAW_DBUS_MESSAGE_TYPE_SIGNAL = DBUS_MESSAGE_TYPE_SIGNAL;
