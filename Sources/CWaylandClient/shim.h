#ifndef NOTIFYBUS_CWAYLANDCLIENT_SHIM_H
#define NOTIFYBUS_CWAYLANDCLIENT_SHIM_H

// libwayland-client, the Wayland protocol's client library, for the Wayland module only.
// Debian/Ubuntu: libwayland-dev to build, libwayland-client0 to run. Linked (pkg-config
// wayland-client).
#include <wayland-client-core.h>
#include <wayland-client-protocol.h>

#endif
