#ifndef UEVENTLATENCY_CUMOCKDEV_SHIM_H
#define UEVENTLATENCY_CUMOCKDEV_SHIM_H

// libumockdev's test bed, for the uevent latency benchmark only.
#include <umockdev.h>

#endif
