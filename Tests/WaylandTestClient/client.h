#ifndef NOTIFYBUS_WAYLAND_TEST_CLIENT_H
#define NOTIFYBUS_WAYLAND_TEST_CLIENT_H

// The tests' own Wayland client: its connection, the toplevels it follows, and the waits on
// the compositor the commands share. One thread, one connection; every wait dispatches the
// connection until a condition holds or a deadline passes.

#include <stdbool.h>
#include <stdint.h>

#include "CForeignToplevel.h"
#include "CWlrTestProtocols.h"

/// A toplevel the foreign-toplevel manager announced, with its details as of its last `done`.
struct toplevel {
    struct zwlr_foreign_toplevel_handle_v1 *handle;
    /// The app id and state as of the last `done` (NULL / 0 before the first).
    char *app_id;
    uint32_t state;
    /// What arrived since the last `done`.
    char *pending_app_id;
    uint32_t pending_state;
    bool pending_state_set;
    /// Whether a `done` has arrived (the toplevel is listed only then).
    bool listed;
    /// The client it belongs to.
    struct client *client;
    struct toplevel *next;
};

/// Bits of `toplevel.state`: 1 << each `zwlr_foreign_toplevel_handle_v1_state` value.
#define STATE_BIT(value) (1u << (value))
#define STATE_ACTIVATED STATE_BIT(ZWLR_FOREIGN_TOPLEVEL_HANDLE_V1_STATE_ACTIVATED)

/// The connection and everything bound on it.
struct client {
    struct wl_display *display;
    struct wl_registry *registry;
    struct wl_compositor *compositor;
    struct wl_shm *shm;
    struct wl_seat *seat;
    uint32_t seat_name;
    struct zwlr_foreign_toplevel_manager_v1 *manager;
    struct zwlr_virtual_pointer_manager_v1 *pointer_manager;
    struct zwlr_virtual_pointer_v1 *pointer;
    struct zwlr_layer_shell_v1 *layer_shell;
    /// The toplevels, in the order the manager announced them.
    struct toplevel *toplevels;
    /// Called after each toplevel's `done` and `closed` (the freezer's hook); may be NULL.
    void (*changed)(struct client *client);
    void *context;
};

/// Connects to the compositor `WAYLAND_DISPLAY` names, binds the globals and, when `seat`,
/// makes a virtual pointer and waits up to `timeout_ms` for a `wl_seat`. Exits (status 1,
/// message on stderr) without a compositor or its foreign-toplevel manager.
void client_connect(struct client *client, bool seat, int timeout_ms);

/// Dispatches the connection until `done(client, argument)` holds or `timeout_ms` passes;
/// whether it held. A lost connection ends the process (status 2, message on stderr).
bool client_wait(struct client *client, bool (*done)(struct client *, const void *), const void *argument,
                 int timeout_ms);

/// A round trip (`wl_display.sync`): every event the compositor sent before it is dispatched.
bool client_roundtrip(struct client *client, int timeout_ms);

/// Reads and dispatches what the compositor sent, without blocking (the main loop calls it
/// when the connection is readable). A lost connection ends the process.
void client_dispatch_ready(struct client *client);

/// Ends the process with status 2 and `what` and libwayland's error on stderr.
_Noreturn void client_lost(struct client *client, const char *what);

/// The first listed toplevel with app id `app_id`, or NULL.
struct toplevel *client_find(struct client *client, const char *app_id);

/// Whether any listed toplevel is activated.
bool client_any_activated(struct client *client);

/// Monotonic milliseconds.
int64_t now_ms(void);

/// `cover`: maps a full-output top-layer surface with exclusive keyboard interactivity and
/// waits until no toplevel is activated; `uncover` destroys it. Each writes its answer line.
void cover(struct client *client, int timeout_ms);
void uncover(struct client *client, int timeout_ms);

/// `--freeze-on-activate APP_ID CGROUP_DIR`; returns the exit status.
int freeze_on_activate(const char *app_id, const char *cgroup_directory);

#endif
