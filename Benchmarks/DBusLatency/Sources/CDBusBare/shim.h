#include <dbus/dbus.h>
static const int BARE_DBUS_TYPE_INT64 = DBUS_TYPE_INT64;
