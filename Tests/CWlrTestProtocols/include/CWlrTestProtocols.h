#ifndef NOTIFYBUS_CWLRTESTPROTOCOLS_H
#define NOTIFYBUS_CWLRTESTPROTOCOLS_H

// The interface descriptions of two wlroots protocols the tests' Wayland client
// (Tests/WaylandTestClient) speaks besides the foreign-toplevel one (Sources/CForeignToplevel),
// written by hand from the protocols' documentation (Debian 12's wayland-protocols has neither):
//
// - wlr-virtual-pointer-unstable-v1, version 1: a client makes a pointer device of its own.
//   phoc makes its seat (`wl_seat`) only when an input device appears, so on a headless phoc a
//   virtual pointer is what brings the seat that `zwlr_foreign_toplevel_handle_v1.activate` needs.
// - wlr-layer-shell-unstable-v1, version 3: a surface in one of the output's layers, as Phosh's
//   overview and lock screen are; one in the top layer with exclusive keyboard interactivity
//   takes the keyboard focus from every toplevel while it is mapped.
//
// The requests come as small inline functions on `wl_proxy_marshal_flags`; the few events
// (the layer surface's `configure` and `closed`) through a listener. For the tests only.

#include <stdint.h>
#include <wayland-client-core.h>
#include <wayland-client-protocol.h>

/// A `zwlr_virtual_pointer_manager_v1` proxy.
struct zwlr_virtual_pointer_manager_v1;
/// A `zwlr_virtual_pointer_v1` proxy.
struct zwlr_virtual_pointer_v1;
/// A `zwlr_layer_shell_v1` proxy.
struct zwlr_layer_shell_v1;
/// A `zwlr_layer_surface_v1` proxy.
struct zwlr_layer_surface_v1;

/// The versions these tables describe.
#define NOTIFYBUS_VIRTUAL_POINTER_VERSION 1
#define NOTIFYBUS_LAYER_SHELL_VERSION 3

/// The virtual pointer manager global: one request (`create_virtual_pointer`), no events.
extern const struct wl_interface zwlr_virtual_pointer_manager_v1_interface;
/// A virtual pointer: nine requests (motion … destroy), no events.
extern const struct wl_interface zwlr_virtual_pointer_v1_interface;
/// The layer shell global: `get_layer_surface` and (version 3) `destroy`.
extern const struct wl_interface zwlr_layer_shell_v1_interface;
/// A layer surface: nine requests, two events (`configure`, `closed`).
extern const struct wl_interface zwlr_layer_surface_v1_interface;

/// `zwlr_layer_shell_v1.layer`: the layers, bottom-most first.
enum zwlr_layer_shell_v1_layer {
    ZWLR_LAYER_SHELL_V1_LAYER_BACKGROUND = 0,
    ZWLR_LAYER_SHELL_V1_LAYER_BOTTOM = 1,
    ZWLR_LAYER_SHELL_V1_LAYER_TOP = 2,
    ZWLR_LAYER_SHELL_V1_LAYER_OVERLAY = 3,
};

/// `zwlr_layer_surface_v1.anchor` (a bit field).
enum zwlr_layer_surface_v1_anchor {
    ZWLR_LAYER_SURFACE_V1_ANCHOR_TOP = 1,
    ZWLR_LAYER_SURFACE_V1_ANCHOR_BOTTOM = 2,
    ZWLR_LAYER_SURFACE_V1_ANCHOR_LEFT = 4,
    ZWLR_LAYER_SURFACE_V1_ANCHOR_RIGHT = 8,
};

/// `zwlr_layer_surface_v1.keyboard_interactivity`.
enum zwlr_layer_surface_v1_keyboard_interactivity {
    ZWLR_LAYER_SURFACE_V1_KEYBOARD_INTERACTIVITY_NONE = 0,
    ZWLR_LAYER_SURFACE_V1_KEYBOARD_INTERACTIVITY_EXCLUSIVE = 1,
};

/// A layer surface's events, in opcode order; `data` is the proxy's user data.
struct zwlr_layer_surface_v1_listener {
    /// Opcode 0, `configure`: the size the compositor gives (0: the client's choice); the client
    /// acks `serial` before its next commit.
    void (*configure)(void *data, struct zwlr_layer_surface_v1 *surface, uint32_t serial, uint32_t width,
                      uint32_t height);
    /// Opcode 1, `closed`: the compositor will not show the surface any more.
    void (*closed)(void *data, struct zwlr_layer_surface_v1 *surface);
};

// Virtual pointer.

/// Binds the virtual pointer manager global `name` at version 1.
static inline struct zwlr_virtual_pointer_manager_v1 *notifybus_virtual_pointer_manager_bind(
    struct wl_registry *registry, uint32_t name) {
    return (struct zwlr_virtual_pointer_manager_v1 *)wl_registry_bind(
        registry, name, &zwlr_virtual_pointer_manager_v1_interface, NOTIFYBUS_VIRTUAL_POINTER_VERSION);
}

/// `create_virtual_pointer(seat, id)` (opcode 0); `seat` may be NULL: the compositor's choice.
static inline struct zwlr_virtual_pointer_v1 *notifybus_virtual_pointer_create(
    struct zwlr_virtual_pointer_manager_v1 *manager, struct wl_seat *seat) {
    struct wl_proxy *proxy = (struct wl_proxy *)manager;
    return (struct zwlr_virtual_pointer_v1 *)wl_proxy_marshal_flags(
        proxy, 0, &zwlr_virtual_pointer_v1_interface, wl_proxy_get_version(proxy), 0, seat, NULL);
}

/// A virtual pointer's `destroy` (opcode 8, the destructor).
static inline void notifybus_virtual_pointer_destroy(struct zwlr_virtual_pointer_v1 *pointer) {
    struct wl_proxy *proxy = (struct wl_proxy *)pointer;
    wl_proxy_marshal_flags(proxy, 8, NULL, wl_proxy_get_version(proxy), WL_MARSHAL_FLAG_DESTROY);
}

/// Destroys the manager's proxy (version 1 has no destructor request).
static inline void notifybus_virtual_pointer_manager_destroy(struct zwlr_virtual_pointer_manager_v1 *manager) {
    wl_proxy_destroy((struct wl_proxy *)manager);
}

// Layer shell.

/// Binds the layer shell global `name` at `version` (at most 3).
static inline struct zwlr_layer_shell_v1 *notifybus_layer_shell_bind(
    struct wl_registry *registry, uint32_t name, uint32_t version) {
    return (struct zwlr_layer_shell_v1 *)wl_registry_bind(registry, name, &zwlr_layer_shell_v1_interface, version);
}

/// `get_layer_surface(id, surface, output, layer, namespace)` (opcode 0); `output` may be NULL.
static inline struct zwlr_layer_surface_v1 *notifybus_layer_shell_get_layer_surface(
    struct zwlr_layer_shell_v1 *shell, struct wl_surface *surface, struct wl_output *output, uint32_t layer,
    const char *name_space) {
    struct wl_proxy *proxy = (struct wl_proxy *)shell;
    return (struct zwlr_layer_surface_v1 *)wl_proxy_marshal_flags(
        proxy, 0, &zwlr_layer_surface_v1_interface, wl_proxy_get_version(proxy), 0, NULL, surface, output, layer,
        name_space);
}

/// Destroys the layer shell's proxy, with its `destroy` request (opcode 1) from version 3 on.
static inline void notifybus_layer_shell_destroy(struct zwlr_layer_shell_v1 *shell) {
    struct wl_proxy *proxy = (struct wl_proxy *)shell;
    if (wl_proxy_get_version(proxy) >= 3) {
        wl_proxy_marshal_flags(proxy, 1, NULL, wl_proxy_get_version(proxy), WL_MARSHAL_FLAG_DESTROY);
    } else {
        wl_proxy_destroy(proxy);
    }
}

/// Sets a layer surface's listener and user data; 0 on success.
static inline int notifybus_layer_surface_add_listener(
    struct zwlr_layer_surface_v1 *surface, const struct zwlr_layer_surface_v1_listener *listener, void *data) {
    return wl_proxy_add_listener((struct wl_proxy *)surface, (void (**)(void))listener, data);
}

#define ZWLR_LAYER_SURFACE_V1_SET_SIZE 0
#define ZWLR_LAYER_SURFACE_V1_SET_ANCHOR 1
#define ZWLR_LAYER_SURFACE_V1_SET_EXCLUSIVE_ZONE 2
#define ZWLR_LAYER_SURFACE_V1_SET_KEYBOARD_INTERACTIVITY 4
#define ZWLR_LAYER_SURFACE_V1_ACK_CONFIGURE 6
#define ZWLR_LAYER_SURFACE_V1_DESTROY 7

/// `set_size(width, height)` (opcode 0); 0 leaves a dimension to the compositor (the surface
/// must then be anchored to both of its edges).
static inline void notifybus_layer_surface_set_size(struct zwlr_layer_surface_v1 *surface, uint32_t width,
                                                    uint32_t height) {
    struct wl_proxy *proxy = (struct wl_proxy *)surface;
    wl_proxy_marshal_flags(proxy, ZWLR_LAYER_SURFACE_V1_SET_SIZE, NULL, wl_proxy_get_version(proxy), 0, width, height);
}

/// `set_anchor(anchor)` (opcode 1): a bit field of `zwlr_layer_surface_v1_anchor`.
static inline void notifybus_layer_surface_set_anchor(struct zwlr_layer_surface_v1 *surface, uint32_t anchor) {
    struct wl_proxy *proxy = (struct wl_proxy *)surface;
    wl_proxy_marshal_flags(proxy, ZWLR_LAYER_SURFACE_V1_SET_ANCHOR, NULL, wl_proxy_get_version(proxy), 0, anchor);
}

/// `set_exclusive_zone(zone)` (opcode 2): -1 stretches the surface over other layers' zones.
static inline void notifybus_layer_surface_set_exclusive_zone(struct zwlr_layer_surface_v1 *surface, int32_t zone) {
    struct wl_proxy *proxy = (struct wl_proxy *)surface;
    wl_proxy_marshal_flags(proxy, ZWLR_LAYER_SURFACE_V1_SET_EXCLUSIVE_ZONE, NULL, wl_proxy_get_version(proxy), 0,
                           zone);
}

/// `set_keyboard_interactivity(value)` (opcode 4): a `zwlr_layer_surface_v1_keyboard_interactivity`.
static inline void notifybus_layer_surface_set_keyboard_interactivity(struct zwlr_layer_surface_v1 *surface,
                                                                      uint32_t value) {
    struct wl_proxy *proxy = (struct wl_proxy *)surface;
    wl_proxy_marshal_flags(proxy, ZWLR_LAYER_SURFACE_V1_SET_KEYBOARD_INTERACTIVITY, NULL, wl_proxy_get_version(proxy),
                           0, value);
}

/// `ack_configure(serial)` (opcode 6), before the commit that answers a `configure`.
static inline void notifybus_layer_surface_ack_configure(struct zwlr_layer_surface_v1 *surface, uint32_t serial) {
    struct wl_proxy *proxy = (struct wl_proxy *)surface;
    wl_proxy_marshal_flags(proxy, ZWLR_LAYER_SURFACE_V1_ACK_CONFIGURE, NULL, wl_proxy_get_version(proxy), 0, serial);
}

/// A layer surface's `destroy` (opcode 7, the destructor).
static inline void notifybus_layer_surface_destroy(struct zwlr_layer_surface_v1 *surface) {
    struct wl_proxy *proxy = (struct wl_proxy *)surface;
    wl_proxy_marshal_flags(proxy, ZWLR_LAYER_SURFACE_V1_DESTROY, NULL, wl_proxy_get_version(proxy),
                           WL_MARSHAL_FLAG_DESTROY);
}

#endif
