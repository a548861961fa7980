#include "client.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// The connection: globals, the toplevels the foreign-toplevel manager reports, and waits.

int64_t now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

_Noreturn void client_lost(struct client *client, const char *what) {
    int code = wl_display_get_error(client->display);
    fprintf(stderr, "WaylandTestClient: %s: the compositor connection is lost (%s)\n", what,
            code ? strerror(code) : "end of connection");
    exit(2);
}

static char *copy(const char *text) {
    char *result = strdup(text ? text : "");
    if (!result) {
        fputs("WaylandTestClient: out of memory\n", stderr);
        exit(1);
    }
    return result;
}

// MARK: Toplevels

static void handle_title(void *data, struct zwlr_foreign_toplevel_handle_v1 *handle, const char *title) {
    (void)data, (void)handle, (void)title;
}

static void handle_app_id(void *data, struct zwlr_foreign_toplevel_handle_v1 *handle, const char *app_id) {
    (void)handle;
    struct toplevel *toplevel = data;
    free(toplevel->pending_app_id);
    toplevel->pending_app_id = copy(app_id);
}

static void handle_output(void *data, struct zwlr_foreign_toplevel_handle_v1 *handle, struct wl_output *output) {
    (void)data, (void)handle, (void)output;
}

static void handle_state(void *data, struct zwlr_foreign_toplevel_handle_v1 *handle, struct wl_array *state) {
    (void)handle;
    struct toplevel *toplevel = data;
    uint32_t bits = 0;
    for (uint32_t *value = state->data; (char *)(value + 1) <= (char *)state->data + state->size; value++) {
        if (*value < 32) bits |= STATE_BIT(*value);
    }
    toplevel->pending_state = bits;
    toplevel->pending_state_set = true;
}

static void notify(struct client *client) {
    if (client->changed) client->changed(client);
}

static void handle_done(void *data, struct zwlr_foreign_toplevel_handle_v1 *handle) {
    (void)handle;
    struct toplevel *toplevel = data;
    if (toplevel->pending_app_id) {
        free(toplevel->app_id);
        toplevel->app_id = toplevel->pending_app_id;
        toplevel->pending_app_id = NULL;
    }
    if (toplevel->pending_state_set) toplevel->state = toplevel->pending_state;
    toplevel->pending_state_set = false;
    if (!toplevel->app_id) toplevel->app_id = copy("");
    toplevel->listed = true;
    notify(toplevel->client);
}

static void handle_parent(void *data, struct zwlr_foreign_toplevel_handle_v1 *handle,
                          struct zwlr_foreign_toplevel_handle_v1 *parent) {
    (void)data, (void)handle, (void)parent;
}

static void handle_closed(void *data, struct zwlr_foreign_toplevel_handle_v1 *handle) {
    struct toplevel *toplevel = data;
    struct client *client = toplevel->client;
    for (struct toplevel **link = &client->toplevels; *link; link = &(*link)->next) {
        if (*link == toplevel) {
            *link = toplevel->next;
            break;
        }
    }
    notifybus_foreign_toplevel_handle_destroy(handle);
    free(toplevel->app_id);
    free(toplevel->pending_app_id);
    free(toplevel);
    notify(client);
}

static const struct zwlr_foreign_toplevel_handle_v1_listener handle_listener = {
    .title = handle_title,
    .app_id = handle_app_id,
    .output_enter = handle_output,
    .output_leave = handle_output,
    .state = handle_state,
    .done = handle_done,
    .closed = handle_closed,
    .parent = handle_parent,
};

static void manager_toplevel(void *data, struct zwlr_foreign_toplevel_manager_v1 *manager,
                             struct zwlr_foreign_toplevel_handle_v1 *handle) {
    (void)manager;
    struct client *client = data;
    struct toplevel *toplevel = calloc(1, sizeof *toplevel);
    if (!toplevel) {
        fputs("WaylandTestClient: out of memory\n", stderr);
        exit(1);
    }
    toplevel->handle = handle;
    toplevel->client = client;
    struct toplevel **last = &client->toplevels;
    while (*last) last = &(*last)->next;
    *last = toplevel;
    notifybus_foreign_toplevel_handle_add_listener(handle, &handle_listener, toplevel);
}

static void manager_finished(void *data, struct zwlr_foreign_toplevel_manager_v1 *manager) {
    struct client *client = data;
    notifybus_foreign_toplevel_manager_destroy(manager);
    client->manager = NULL;
    fputs("WaylandTestClient: the compositor finished the foreign-toplevel manager\n", stderr);
    exit(2);
}

static const struct zwlr_foreign_toplevel_manager_v1_listener manager_listener = {
    .toplevel = manager_toplevel,
    .finished = manager_finished,
};

struct toplevel *client_find(struct client *client, const char *app_id) {
    for (struct toplevel *toplevel = client->toplevels; toplevel; toplevel = toplevel->next) {
        if (toplevel->listed && strcmp(toplevel->app_id, app_id) == 0) return toplevel;
    }
    return NULL;
}

bool client_any_activated(struct client *client) {
    for (struct toplevel *toplevel = client->toplevels; toplevel; toplevel = toplevel->next) {
        if (toplevel->listed && (toplevel->state & STATE_ACTIVATED)) return true;
    }
    return false;
}

// MARK: Globals

static uint32_t lower(uint32_t a, uint32_t b) { return a < b ? a : b; }

static void registry_global(void *data, struct wl_registry *registry, uint32_t name, const char *interface,
                            uint32_t version) {
    struct client *client = data;
    if (strcmp(interface, wl_compositor_interface.name) == 0 && !client->compositor) {
        client->compositor = wl_registry_bind(registry, name, &wl_compositor_interface, lower(version, 4));
    } else if (strcmp(interface, wl_shm_interface.name) == 0 && !client->shm) {
        client->shm = wl_registry_bind(registry, name, &wl_shm_interface, 1);
    } else if (strcmp(interface, wl_seat_interface.name) == 0 && !client->seat) {
        client->seat = wl_registry_bind(registry, name, &wl_seat_interface, 1);
        client->seat_name = name;
    } else if (strcmp(interface, zwlr_foreign_toplevel_manager_v1_interface.name) == 0 && !client->manager) {
        if (version < NOTIFYBUS_FOREIGN_TOPLEVEL_VERSION) return;
        client->manager = notifybus_foreign_toplevel_manager_bind(registry, name, NOTIFYBUS_FOREIGN_TOPLEVEL_VERSION);
        notifybus_foreign_toplevel_manager_add_listener(client->manager, &manager_listener, client);
    } else if (strcmp(interface, zwlr_virtual_pointer_manager_v1_interface.name) == 0 && !client->pointer_manager) {
        client->pointer_manager = notifybus_virtual_pointer_manager_bind(registry, name);
    } else if (strcmp(interface, zwlr_layer_shell_v1_interface.name) == 0 && !client->layer_shell) {
        client->layer_shell = notifybus_layer_shell_bind(registry, name, lower(version, NOTIFYBUS_LAYER_SHELL_VERSION));
    }
}

static void registry_global_remove(void *data, struct wl_registry *registry, uint32_t name) {
    (void)registry;
    struct client *client = data;
    if (client->seat && name == client->seat_name) {
        wl_seat_destroy(client->seat);
        client->seat = NULL;
    }
}

static const struct wl_registry_listener registry_listener = {
    .global = registry_global,
    .global_remove = registry_global_remove,
};

static bool has_seat(struct client *client, const void *argument) {
    (void)argument;
    return client->seat != NULL;
}

void client_connect(struct client *client, bool seat, int timeout_ms) {
    client->display = wl_display_connect(NULL);
    if (!client->display) {
        fprintf(stderr, "WaylandTestClient: cannot connect to the compositor (WAYLAND_DISPLAY %s): %s\n",
                getenv("WAYLAND_DISPLAY") ? getenv("WAYLAND_DISPLAY") : "unset", strerror(errno));
        exit(1);
    }
    client->registry = wl_display_get_registry(client->display);
    wl_registry_add_listener(client->registry, &registry_listener, client);
    if (!client_roundtrip(client, timeout_ms)) {
        fputs("WaylandTestClient: the compositor did not answer\n", stderr);
        exit(1);
    }
    if (!client->manager) {
        fputs("WaylandTestClient: the compositor has no zwlr_foreign_toplevel_manager_v1 of version 3\n", stderr);
        exit(1);
    }
    if (seat && client->pointer_manager) client->pointer = notifybus_virtual_pointer_create(client->pointer_manager, NULL);
    // The toplevels' first details, and the seat the virtual pointer brings.
    client_roundtrip(client, timeout_ms);
    if (seat && client->pointer) client_wait(client, has_seat, NULL, timeout_ms);
}

// MARK: Waiting

void client_dispatch_ready(struct client *client) {
    struct wl_display *display = client->display;
    while (wl_display_prepare_read(display) != 0) {
        if (wl_display_dispatch_pending(display) < 0) client_lost(client, "dispatch");
    }
    if (wl_display_read_events(display) < 0) client_lost(client, "read");
    if (wl_display_dispatch_pending(display) < 0) client_lost(client, "dispatch");
}

bool client_wait(struct client *client, bool (*done)(struct client *, const void *), const void *argument,
                 int timeout_ms) {
    struct wl_display *display = client->display;
    int64_t deadline = now_ms() + timeout_ms;
    while (true) {
        if (wl_display_dispatch_pending(display) < 0) client_lost(client, "dispatch");
        if (done(client, argument)) return true;
        int64_t left = deadline - now_ms();
        if (left <= 0) return false;
        while (wl_display_prepare_read(display) != 0) {
            if (wl_display_dispatch_pending(display) < 0) client_lost(client, "dispatch");
        }
        if (wl_display_flush(display) < 0 && errno != EAGAIN) {
            wl_display_cancel_read(display);
            client_lost(client, "flush");
        }
        struct pollfd descriptor = { .fd = wl_display_get_fd(display), .events = POLLIN };
        int ready = poll(&descriptor, 1, (int)left);
        if (ready > 0) {
            if (wl_display_read_events(display) < 0) client_lost(client, "read");
        } else {
            wl_display_cancel_read(display);
        }
    }
}

// A round trip's answer; a wait that timed out leaves it to the callback to free.
struct sync {
    bool answered;
    bool abandoned;
};

static void sync_done(void *data, struct wl_callback *callback, uint32_t serial) {
    (void)serial;
    struct sync *sync = data;
    wl_callback_destroy(callback);
    if (sync->abandoned) {
        free(sync);
    } else {
        sync->answered = true;
    }
}

static const struct wl_callback_listener sync_listener = { .done = sync_done };

static bool answered(struct client *client, const void *sync) {
    (void)client;
    return ((const struct sync *)sync)->answered;
}

bool client_roundtrip(struct client *client, int timeout_ms) {
    struct sync *sync = calloc(1, sizeof *sync);
    if (!sync) {
        fputs("WaylandTestClient: out of memory\n", stderr);
        exit(1);
    }
    struct wl_callback *callback = wl_display_sync(client->display);
    wl_callback_add_listener(callback, &sync_listener, sync);
    bool ok = client_wait(client, answered, sync, timeout_ms);
    if (ok) {
        free(sync);
    } else {
        sync->abandoned = true;
    }
    return ok;
}
