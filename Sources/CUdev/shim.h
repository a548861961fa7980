#ifndef NOTIFYBUS_CUDEV_SHIM_H
#define NOTIFYBUS_CUDEV_SHIM_H

// libudev, imported for the Udev module only. Nothing else in NotifyBus imports C directly.
#include <libudev.h>

#endif
