#ifndef NOTIFYBUS_CMOSQUITTO_SHIM_H
#define NOTIFYBUS_CMOSQUITTO_SHIM_H

// libmosquitto, the MQTT client library of the Mosquitto project, for the Mosquitto module only.
// Debian/Ubuntu: libmosquitto-dev (pkg-config libmosquitto).
#include <mosquitto.h>
#include <mqtt_protocol.h>

#endif
