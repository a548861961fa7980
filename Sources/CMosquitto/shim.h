#ifndef NOTIFYBUS_CMOSQUITTO_SHIM_H
#define NOTIFYBUS_CMOSQUITTO_SHIM_H

// libmosquitto, the MQTT client library of the Mosquitto project, for the Mosquitto module only.
// Debian/Ubuntu: libmosquitto-dev to build (its header), libmosquitto1 to run.
//
// Linked (pkg-config libmosquitto). Its functions are reached through the table below, each field
// typed as the function it holds, so that one value carries them to the wrapper types.
#include <stddef.h>
#include <mosquitto.h>
#include <mqtt_protocol.h>

#define NOTIFYBUS_MOSQUITTO_FUNCTIONS(X) \
    X(lib_init) X(new) X(destroy) X(user_data_set) X(int_option) X(username_pw_set) X(tls_set) \
    X(will_set) X(property_add_int32) X(property_free_all) X(connect_bind_v5) X(connect_async) \
    X(publish) X(subscribe) X(disconnect) X(loop_read) X(loop_write) X(loop_misc) X(socket) \
    X(want_write) X(strerror) X(connack_string) X(reason_string) X(connect_v5_callback_set) \
    X(disconnect_v5_callback_set) X(publish_v5_callback_set) X(message_v5_callback_set) \
    X(log_callback_set) X(property_read_int16)

/// The libmosquitto functions the Mosquitto module calls, once loaded.
typedef struct notifybus_mosquitto_api {
#define NOTIFYBUS_MOSQUITTO_FIELD(name) __typeof__(mosquitto_##name) *name;
    NOTIFYBUS_MOSQUITTO_FUNCTIONS(NOTIFYBUS_MOSQUITTO_FIELD)
#undef NOTIFYBUS_MOSQUITTO_FIELD
} notifybus_mosquitto_api;

/// Fills `api` with libmosquitto's functions.
static inline void notifybus_mosquitto_fill(notifybus_mosquitto_api *api) {
#define NOTIFYBUS_MOSQUITTO_SET(name) api->name = mosquitto_##name;
    NOTIFYBUS_MOSQUITTO_FUNCTIONS(NOTIFYBUS_MOSQUITTO_SET)
#undef NOTIFYBUS_MOSQUITTO_SET
}

#endif
