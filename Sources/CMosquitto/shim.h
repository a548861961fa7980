#ifndef NOTIFYBUS_CMOSQUITTO_SHIM_H
#define NOTIFYBUS_CMOSQUITTO_SHIM_H

// libmosquitto, the MQTT client library of the Mosquitto project, for the Mosquitto module only.
// Debian/Ubuntu: libmosquitto-dev to build (its header), libmosquitto1 to run.
//
// The library is loaded when the first MQTT client is made (dlopen), not linked: with it come
// libssl and libcrypto, about 2 MB of resident memory that notifybusd and notifywatch would
// otherwise carry without --mqtt. Its functions are reached through the table below, each field
// typed as the function it holds (so calls are checked against mosquitto.h as direct calls are).
#include <dlfcn.h>
#include <stddef.h>
#include <mosquitto.h>
#include <mqtt_protocol.h>

#define NOTIFYBUS_MOSQUITTO_FUNCTIONS(X) \
    X(lib_init) X(new) X(destroy) X(user_data_set) X(int_option) X(username_pw_set) X(tls_set) \
    X(will_set) X(property_add_int32) X(property_free_all) X(connect_bind_v5) X(connect_async) \
    X(publish) X(subscribe) X(disconnect) X(loop_read) X(loop_write) X(loop_misc) X(socket) \
    X(want_write) X(strerror) X(connack_string) X(reason_string) X(connect_v5_callback_set) \
    X(disconnect_v5_callback_set) X(publish_v5_callback_set) X(message_v5_callback_set) \
    X(log_callback_set)

/// The libmosquitto functions the Mosquitto module calls, once loaded.
typedef struct notifybus_mosquitto_api {
#define NOTIFYBUS_MOSQUITTO_FIELD(name) __typeof__(mosquitto_##name) *name;
    NOTIFYBUS_MOSQUITTO_FUNCTIONS(NOTIFYBUS_MOSQUITTO_FIELD)
#undef NOTIFYBUS_MOSQUITTO_FIELD
} notifybus_mosquitto_api;

/// Loads libmosquitto (`library`, e.g. "libmosquitto.so.1") and fills `api`; returns NULL, or
/// what failed (dlerror's message, or the name of a missing function).
static inline const char *notifybus_mosquitto_load(const char *library, notifybus_mosquitto_api *api) {
    void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *error = dlerror();
        return error != NULL ? error : library;
    }
#define NOTIFYBUS_MOSQUITTO_LOAD(name) \
    api->name = (__typeof__(api->name))dlsym(handle, "mosquitto_" #name); \
    if (api->name == NULL) return "mosquitto_" #name;
    NOTIFYBUS_MOSQUITTO_FUNCTIONS(NOTIFYBUS_MOSQUITTO_LOAD)
#undef NOTIFYBUS_MOSQUITTO_LOAD
    return NULL;
}

#endif
