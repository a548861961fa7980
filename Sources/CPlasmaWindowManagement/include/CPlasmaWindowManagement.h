#ifndef NOTIFYBUS_CPLASMAWINDOWMANAGEMENT_H
#define NOTIFYBUS_CPLASMAWINDOWMANAGEMENT_H

// The interface description of KDE's plasma-window-management protocol (plasma-wayland-protocols'
// plasma-window-management.xml), version 4, written by hand from the protocol's documentation:
// the two window interfaces' message tables for libwayland-client, their listeners, and the few
// requests the Wayland module sends. For the Wayland module only.
//
// The protocol, in short. A client binds the global `org_kde_plasma_window_management`; the
// manager then announces every mapped window, existing and new, with its `window` event (the
// compositor's internal id of the window), and the client asks for the window's object with
// `get_window(new_id, internal id)`. The window then receives its details (`app_id_changed`,
// `pid_changed`, `title_changed`, `state_changed`, …) followed by `initial_state` (version 4),
// then each change as it happens, and `unmapped` when it is gone; the client then sends `destroy`
// (version 4). The manager has no destructor: its proxy is just destroyed.
//
// Version 4 is the lowest with `initial_state` (the end of a window's first details) and a
// window's `destroy`; app id, state and pid are there from version 1.

#include <stdint.h>
#include <wayland-client-core.h>
#include <wayland-client-protocol.h>

/// An `org_kde_plasma_window_management` proxy (a `struct wl_proxy`).
struct org_kde_plasma_window_management;
/// An `org_kde_plasma_window` proxy (a `struct wl_proxy`).
struct org_kde_plasma_window;

/// The version these tables are bound at.
#define NOTIFYBUS_PLASMA_WINDOW_MANAGEMENT_VERSION 4

/// The interface of the manager global: its name, two requests and two events.
extern const struct wl_interface org_kde_plasma_window_management_interface;
/// The interface of a window: its name, eight requests and fourteen events.
extern const struct wl_interface org_kde_plasma_window_interface;

// Request opcodes (the order of the requests in the protocol).

#define ORG_KDE_PLASMA_WINDOW_MANAGEMENT_SHOW_DESKTOP 0
/// `org_kde_plasma_window_management.get_window(new_id, uint internal_window_id)`.
#define ORG_KDE_PLASMA_WINDOW_MANAGEMENT_GET_WINDOW 1

#define ORG_KDE_PLASMA_WINDOW_SET_STATE 0
#define ORG_KDE_PLASMA_WINDOW_SET_VIRTUAL_DESKTOP 1
#define ORG_KDE_PLASMA_WINDOW_SET_MINIMIZED_GEOMETRY 2
#define ORG_KDE_PLASMA_WINDOW_UNSET_MINIMIZED_GEOMETRY 3
#define ORG_KDE_PLASMA_WINDOW_CLOSE 4
#define ORG_KDE_PLASMA_WINDOW_REQUEST_MOVE 5
#define ORG_KDE_PLASMA_WINDOW_REQUEST_RESIZE 6
/// `org_kde_plasma_window.destroy`, the destructor (since version 4).
#define ORG_KDE_PLASMA_WINDOW_DESTROY 7

/// The bits of a window's `state_changed` bitfield (`org_kde_plasma_window_management.state`).
enum org_kde_plasma_window_management_state {
    ORG_KDE_PLASMA_WINDOW_MANAGEMENT_STATE_ACTIVE = 1 << 0,
    ORG_KDE_PLASMA_WINDOW_MANAGEMENT_STATE_MINIMIZED = 1 << 1,
    ORG_KDE_PLASMA_WINDOW_MANAGEMENT_STATE_MAXIMIZED = 1 << 2,
    ORG_KDE_PLASMA_WINDOW_MANAGEMENT_STATE_FULLSCREEN = 1 << 3,
    ORG_KDE_PLASMA_WINDOW_MANAGEMENT_STATE_KEEP_ABOVE = 1 << 4,
    ORG_KDE_PLASMA_WINDOW_MANAGEMENT_STATE_KEEP_BELOW = 1 << 5,
    ORG_KDE_PLASMA_WINDOW_MANAGEMENT_STATE_ON_ALL_DESKTOPS = 1 << 6,
    ORG_KDE_PLASMA_WINDOW_MANAGEMENT_STATE_DEMANDS_ATTENTION = 1 << 7,
    ORG_KDE_PLASMA_WINDOW_MANAGEMENT_STATE_CLOSEABLE = 1 << 8,
    ORG_KDE_PLASMA_WINDOW_MANAGEMENT_STATE_MINIMIZABLE = 1 << 9,
    ORG_KDE_PLASMA_WINDOW_MANAGEMENT_STATE_MAXIMIZABLE = 1 << 10,
    ORG_KDE_PLASMA_WINDOW_MANAGEMENT_STATE_FULLSCREENABLE = 1 << 11,
    /// Since version 2: not shown in a task bar (panels, the desktop, notifications, …).
    ORG_KDE_PLASMA_WINDOW_MANAGEMENT_STATE_SKIPTASKBAR = 1 << 12,
};

/// The manager's events, in opcode order; `data` is the proxy's user data.
struct org_kde_plasma_window_management_listener {
    /// Opcode 0, `show_desktop_changed`: the show-desktop mode (0 off, 1 on).
    void (*show_desktop_changed)(void *data, struct org_kde_plasma_window_management *manager, uint32_t state);
    /// Opcode 1, `window`: a window was mapped; its internal id, for `get_window`.
    void (*window)(void *data, struct org_kde_plasma_window_management *manager, uint32_t id);
};

/// A window's events, in opcode order; `data` is the proxy's user data. The table has every
/// event through opcode 13, though the window is bound at version 4: KWin 5.27 sends
/// `parent_window`, `virtual_desktop_entered` and `application_menu` whatever the version.
struct org_kde_plasma_window_listener {
    /// Opcode 0, `title_changed`.
    void (*title_changed)(void *data, struct org_kde_plasma_window *window, const char *title);
    /// Opcode 1, `app_id_changed`.
    void (*app_id_changed)(void *data, struct org_kde_plasma_window *window, const char *app_id);
    /// Opcode 2, `state_changed`: the whole bitfield of `org_kde_plasma_window_management_state`.
    void (*state_changed)(void *data, struct org_kde_plasma_window *window, uint32_t flags);
    /// Opcode 3, `virtual_desktop_changed` (deprecated).
    void (*virtual_desktop_changed)(void *data, struct org_kde_plasma_window *window, int32_t number);
    /// Opcode 4, `themed_icon_name_changed`.
    void (*themed_icon_name_changed)(void *data, struct org_kde_plasma_window *window, const char *name);
    /// Opcode 5, `unmapped`: the window is gone; only `destroy` may follow.
    void (*unmapped)(void *data, struct org_kde_plasma_window *window);
    /// Opcode 6, `initial_state` (since version 4): every detail known at first has been sent.
    void (*initial_state)(void *data, struct org_kde_plasma_window *window);
    /// Opcode 7, `parent_window` (since version 5): the parent window, or NULL.
    void (*parent_window)(void *data, struct org_kde_plasma_window *window, struct org_kde_plasma_window *parent);
    /// Opcode 8, `geometry` (since version 6).
    void (*geometry)(void *data, struct org_kde_plasma_window *window, int32_t x, int32_t y, uint32_t width,
                     uint32_t height);
    /// Opcode 9, `icon_changed` (since version 7).
    void (*icon_changed)(void *data, struct org_kde_plasma_window *window);
    /// Opcode 10, `pid_changed`: the process that owns the window.
    void (*pid_changed)(void *data, struct org_kde_plasma_window *window, uint32_t pid);
    /// Opcode 11, `virtual_desktop_entered` (since version 8).
    void (*virtual_desktop_entered)(void *data, struct org_kde_plasma_window *window, const char *id);
    /// Opcode 12, `virtual_desktop_left` (since version 8).
    void (*virtual_desktop_left)(void *data, struct org_kde_plasma_window *window, const char *id);
    /// Opcode 13, `application_menu` (since version 10).
    void (*application_menu)(void *data, struct org_kde_plasma_window *window, const char *service_name,
                             const char *object_path);
};

/// Sets the manager's listener and user data (`wl_proxy_add_listener`); 0 on success, -1 when a
/// listener was already set. `listener` must outlive the proxy.
static inline int notifybus_plasma_window_management_add_listener(
    struct org_kde_plasma_window_management *manager,
    const struct org_kde_plasma_window_management_listener *listener, void *data) {
    return wl_proxy_add_listener((struct wl_proxy *)manager, (void (**)(void))listener, data);
}

/// Sets a window's listener and user data (`wl_proxy_add_listener`); 0 on success, -1 when a
/// listener was already set. `listener` must outlive the proxy.
static inline int notifybus_plasma_window_add_listener(
    struct org_kde_plasma_window *window, const struct org_kde_plasma_window_listener *listener, void *data) {
    return wl_proxy_add_listener((struct wl_proxy *)window, (void (**)(void))listener, data);
}

/// Binds the manager global `name` at `version` on `registry` (`wl_registry.bind`, through
/// `wl_proxy_marshal_flags`); NULL when libwayland cannot make the proxy.
static inline struct org_kde_plasma_window_management *notifybus_plasma_window_management_bind(
    struct wl_registry *registry, uint32_t name, uint32_t version) {
    return (struct org_kde_plasma_window_management *)wl_registry_bind(
        registry, name, &org_kde_plasma_window_management_interface, version);
}

/// Sends the manager's `get_window` request for the window with the compositor's internal id
/// `internal_id` (`wl_proxy_marshal_flags`, opcode 1), which makes its proxy at the manager's
/// version; NULL when libwayland cannot make it.
static inline struct org_kde_plasma_window *notifybus_plasma_window_management_get_window(
    struct org_kde_plasma_window_management *manager, uint32_t internal_id) {
    struct wl_proxy *proxy = (struct wl_proxy *)manager;
    return (struct org_kde_plasma_window *)wl_proxy_marshal_flags(
        proxy, ORG_KDE_PLASMA_WINDOW_MANAGEMENT_GET_WINDOW, &org_kde_plasma_window_interface,
        wl_proxy_get_version(proxy), 0, NULL, internal_id);
}

/// Destroys the manager's proxy without a request (`wl_proxy_destroy`): the protocol has no
/// destructor request for the manager.
static inline void notifybus_plasma_window_management_destroy(struct org_kde_plasma_window_management *manager) {
    wl_proxy_destroy((struct wl_proxy *)manager);
}

/// Sends a window's `destroy` request (`wl_proxy_marshal_flags`, opcode 7), then destroys its
/// proxy (`wl_proxy_destroy`).
static inline void notifybus_plasma_window_destroy(struct org_kde_plasma_window *window) {
    struct wl_proxy *proxy = (struct wl_proxy *)window;
    wl_proxy_marshal_flags(proxy, ORG_KDE_PLASMA_WINDOW_DESTROY, NULL, wl_proxy_get_version(proxy), 0);
    wl_proxy_destroy(proxy);
}

#endif
