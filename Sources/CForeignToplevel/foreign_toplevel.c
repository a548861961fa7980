#include "CForeignToplevel.h"

#include <stddef.h>

// The message tables of wlr-foreign-toplevel-management-unstable-v1, version 3.
//
// libwayland-client marshals requests and demarshals events by these tables: a message's
// opcode is its index in its table, its signature names each argument's type (`s` string,
// `o` object, `?o` object or null, `n` new object, `i` int, `a` array; a leading number is the
// version that added the message), and its `types` hold, argument by argument, the interface of
// an object or new object (NULL for the others). The order of the messages and their arguments
// is the order of the protocol's documentation.

// Arguments that are not objects (and messages without arguments).
static const struct wl_interface *no_objects[] = { NULL, NULL, NULL, NULL, NULL };
// `toplevel` (new_id) and `parent` (object, nullable).
static const struct wl_interface *a_handle[] = { &zwlr_foreign_toplevel_handle_v1_interface };
// `output_enter`, `output_leave`, `set_fullscreen` (nullable).
static const struct wl_interface *an_output[] = { &wl_output_interface };
// `activate`.
static const struct wl_interface *a_seat[] = { &wl_seat_interface };
// `set_rectangle`: surface, x, y, width, height.
static const struct wl_interface *a_surface_and_four_ints[] = { &wl_surface_interface, NULL, NULL, NULL, NULL };

static const struct wl_message manager_requests[] = {
    { "stop", "", no_objects },
};

static const struct wl_message manager_events[] = {
    { "toplevel", "n", a_handle },
    { "finished", "", no_objects },
};

const struct wl_interface zwlr_foreign_toplevel_manager_v1_interface = {
    "zwlr_foreign_toplevel_manager_v1", 3,
    1, manager_requests,
    2, manager_events,
};

static const struct wl_message handle_requests[] = {
    { "set_maximized", "", no_objects },
    { "unset_maximized", "", no_objects },
    { "set_minimized", "", no_objects },
    { "unset_minimized", "", no_objects },
    { "activate", "o", a_seat },
    { "close", "", no_objects },
    { "set_rectangle", "oiiii", a_surface_and_four_ints },
    { "destroy", "", no_objects },
    { "set_fullscreen", "2?o", an_output },
    { "unset_fullscreen", "2", no_objects },
};

static const struct wl_message handle_events[] = {
    { "title", "s", no_objects },
    { "app_id", "s", no_objects },
    { "output_enter", "o", an_output },
    { "output_leave", "o", an_output },
    { "state", "a", no_objects },
    { "done", "", no_objects },
    { "closed", "", no_objects },
    { "parent", "3?o", a_handle },
};

const struct wl_interface zwlr_foreign_toplevel_handle_v1_interface = {
    "zwlr_foreign_toplevel_handle_v1", 3,
    10, handle_requests,
    8, handle_events,
};
