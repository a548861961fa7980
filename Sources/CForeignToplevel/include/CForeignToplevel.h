#ifndef NOTIFYBUS_CFOREIGNTOPLEVEL_H
#define NOTIFYBUS_CFOREIGNTOPLEVEL_H

// The interface description of the wlr foreign-toplevel-management protocol
// (wlr-foreign-toplevel-management-unstable-v1, version 3), written by hand from the protocol's
// documentation: the two interfaces' message tables for libwayland-client, their listeners, and
// the few requests the Wayland module sends. For the Wayland module only.
//
// The protocol, in short. A client binds the global `zwlr_foreign_toplevel_manager_v1`; the
// manager then announces every toplevel window, existing and new, with its `toplevel` event,
// which creates a `zwlr_foreign_toplevel_handle_v1`. A handle receives its details (`title`,
// `app_id`, `output_enter`/`output_leave`, `state`, `parent`) followed by `done`, at first and
// after each change, and `closed` when the window is gone; the client then sends `destroy`.
// The manager's `stop` request asks for no more windows; its `finished` event ends it.

#include <stdint.h>
#include <wayland-client-core.h>
#include <wayland-client-protocol.h>

/// A `zwlr_foreign_toplevel_manager_v1` proxy (a `struct wl_proxy`).
struct zwlr_foreign_toplevel_manager_v1;
/// A `zwlr_foreign_toplevel_handle_v1` proxy (a `struct wl_proxy`).
struct zwlr_foreign_toplevel_handle_v1;

/// The highest version of the protocol these tables describe.
#define NOTIFYBUS_FOREIGN_TOPLEVEL_VERSION 3

/// The interface of the manager global: its name, version 3, one request and two events.
extern const struct wl_interface zwlr_foreign_toplevel_manager_v1_interface;
/// The interface of a toplevel's handle: its name, version 3, ten requests and eight events.
extern const struct wl_interface zwlr_foreign_toplevel_handle_v1_interface;

// Request opcodes (the order of the requests in the protocol).

/// `zwlr_foreign_toplevel_manager_v1.stop`: no more `toplevel` events, please.
#define ZWLR_FOREIGN_TOPLEVEL_MANAGER_V1_STOP 0

#define ZWLR_FOREIGN_TOPLEVEL_HANDLE_V1_SET_MAXIMIZED 0
#define ZWLR_FOREIGN_TOPLEVEL_HANDLE_V1_UNSET_MAXIMIZED 1
#define ZWLR_FOREIGN_TOPLEVEL_HANDLE_V1_SET_MINIMIZED 2
#define ZWLR_FOREIGN_TOPLEVEL_HANDLE_V1_UNSET_MINIMIZED 3
#define ZWLR_FOREIGN_TOPLEVEL_HANDLE_V1_ACTIVATE 4
#define ZWLR_FOREIGN_TOPLEVEL_HANDLE_V1_CLOSE 5
#define ZWLR_FOREIGN_TOPLEVEL_HANDLE_V1_SET_RECTANGLE 6
/// `zwlr_foreign_toplevel_handle_v1.destroy`, the destructor.
#define ZWLR_FOREIGN_TOPLEVEL_HANDLE_V1_DESTROY 7
#define ZWLR_FOREIGN_TOPLEVEL_HANDLE_V1_SET_FULLSCREEN 8
#define ZWLR_FOREIGN_TOPLEVEL_HANDLE_V1_UNSET_FULLSCREEN 9

/// The values in a handle's `state` array (an array of uint32).
enum zwlr_foreign_toplevel_handle_v1_state {
    ZWLR_FOREIGN_TOPLEVEL_HANDLE_V1_STATE_MAXIMIZED = 0,
    ZWLR_FOREIGN_TOPLEVEL_HANDLE_V1_STATE_MINIMIZED = 1,
    ZWLR_FOREIGN_TOPLEVEL_HANDLE_V1_STATE_ACTIVATED = 2,
    /// Since version 2.
    ZWLR_FOREIGN_TOPLEVEL_HANDLE_V1_STATE_FULLSCREEN = 3,
};

/// The manager's events, in opcode order; `data` is the proxy's user data.
struct zwlr_foreign_toplevel_manager_v1_listener {
    /// Opcode 0, `toplevel`: a new handle (created by libwayland, version of the manager).
    void (*toplevel)(void *data, struct zwlr_foreign_toplevel_manager_v1 *manager,
                     struct zwlr_foreign_toplevel_handle_v1 *toplevel);
    /// Opcode 1, `finished`: the compositor is done with the manager, which is now gone on its
    /// side; destroy the proxy.
    void (*finished)(void *data, struct zwlr_foreign_toplevel_manager_v1 *manager);
};

/// A handle's events, in opcode order; `data` is the proxy's user data.
struct zwlr_foreign_toplevel_handle_v1_listener {
    /// Opcode 0, `title`.
    void (*title)(void *data, struct zwlr_foreign_toplevel_handle_v1 *handle, const char *title);
    /// Opcode 1, `app_id`.
    void (*app_id)(void *data, struct zwlr_foreign_toplevel_handle_v1 *handle, const char *app_id);
    /// Opcode 2, `output_enter`.
    void (*output_enter)(void *data, struct zwlr_foreign_toplevel_handle_v1 *handle, struct wl_output *output);
    /// Opcode 3, `output_leave`.
    void (*output_leave)(void *data, struct zwlr_foreign_toplevel_handle_v1 *handle, struct wl_output *output);
    /// Opcode 4, `state`: an array of uint32 values of `zwlr_foreign_toplevel_handle_v1_state`.
    void (*state)(void *data, struct zwlr_foreign_toplevel_handle_v1 *handle, struct wl_array *state);
    /// Opcode 5, `done`: the details sent before it are one atomic change.
    void (*done)(void *data, struct zwlr_foreign_toplevel_handle_v1 *handle);
    /// Opcode 6, `closed`: the window is gone; only `destroy` may follow.
    void (*closed)(void *data, struct zwlr_foreign_toplevel_handle_v1 *handle);
    /// Opcode 7, `parent` (since version 3): the parent handle, or NULL.
    void (*parent)(void *data, struct zwlr_foreign_toplevel_handle_v1 *handle,
                   struct zwlr_foreign_toplevel_handle_v1 *parent);
};

/// Sets the manager's listener and user data (`wl_proxy_add_listener`); 0 on success, -1 when a
/// listener was already set. `listener` must outlive the proxy.
static inline int notifybus_foreign_toplevel_manager_add_listener(
    struct zwlr_foreign_toplevel_manager_v1 *manager,
    const struct zwlr_foreign_toplevel_manager_v1_listener *listener, void *data) {
    return wl_proxy_add_listener((struct wl_proxy *)manager, (void (**)(void))listener, data);
}

/// Sets a handle's listener and user data (`wl_proxy_add_listener`); 0 on success, -1 when a
/// listener was already set. `listener` must outlive the proxy.
static inline int notifybus_foreign_toplevel_handle_add_listener(
    struct zwlr_foreign_toplevel_handle_v1 *handle,
    const struct zwlr_foreign_toplevel_handle_v1_listener *listener, void *data) {
    return wl_proxy_add_listener((struct wl_proxy *)handle, (void (**)(void))listener, data);
}

/// Binds the manager global `name` at `version` on `registry` (`wl_registry.bind`, through
/// `wl_proxy_marshal_flags`); NULL when libwayland cannot make the proxy.
static inline struct zwlr_foreign_toplevel_manager_v1 *notifybus_foreign_toplevel_manager_bind(
    struct wl_registry *registry, uint32_t name, uint32_t version) {
    return (struct zwlr_foreign_toplevel_manager_v1 *)wl_registry_bind(
        registry, name, &zwlr_foreign_toplevel_manager_v1_interface, version);
}

/// Sends the manager's `stop` request (`wl_proxy_marshal_flags`, opcode 0). The proxy stays:
/// the compositor answers with `finished`.
static inline void notifybus_foreign_toplevel_manager_stop(struct zwlr_foreign_toplevel_manager_v1 *manager) {
    struct wl_proxy *proxy = (struct wl_proxy *)manager;
    wl_proxy_marshal_flags(proxy, ZWLR_FOREIGN_TOPLEVEL_MANAGER_V1_STOP, NULL, wl_proxy_get_version(proxy), 0);
}

/// Destroys the manager's proxy without a request (`wl_proxy_destroy`): the protocol has no
/// destructor request for the manager.
static inline void notifybus_foreign_toplevel_manager_destroy(struct zwlr_foreign_toplevel_manager_v1 *manager) {
    wl_proxy_destroy((struct wl_proxy *)manager);
}

/// Sends a handle's `destroy` request (`wl_proxy_marshal_flags`, opcode 7), then destroys its
/// proxy (`wl_proxy_destroy`).
static inline void notifybus_foreign_toplevel_handle_destroy(struct zwlr_foreign_toplevel_handle_v1 *handle) {
    struct wl_proxy *proxy = (struct wl_proxy *)handle;
    wl_proxy_marshal_flags(proxy, ZWLR_FOREIGN_TOPLEVEL_HANDLE_V1_DESTROY, NULL, wl_proxy_get_version(proxy), 0);
    wl_proxy_destroy(proxy);
}

#endif
