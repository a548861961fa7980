#ifndef NOTIFYBUS_CFOREIGNTOPLEVEL_H
#define NOTIFYBUS_CFOREIGNTOPLEVEL_H

// The interface description of the wlr foreign-toplevel-management protocol (version 3),
// written from the protocol's documentation. Filled in with the Wayland module.
#include <wayland-client-core.h>

#endif
