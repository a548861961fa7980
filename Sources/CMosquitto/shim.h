#ifndef NOTIFYBUS_CMOSQUITTO_SHIM_H
#define NOTIFYBUS_CMOSQUITTO_SHIM_H

// libmosquitto, the MQTT client library of the Mosquitto project, for the Mosquitto module only.
// Debian/Ubuntu: libmosquitto-dev to build (its headers), libmosquitto1 to run; linked through
// pkg-config (libmosquitto).
#include <mosquitto.h>
#include <mqtt_protocol.h>

#endif
