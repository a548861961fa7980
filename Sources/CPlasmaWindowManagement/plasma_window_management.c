#include "CPlasmaWindowManagement.h"

#include <stddef.h>

// The message tables of plasma-window-management's two window interfaces
// (`org_kde_plasma_window_management` and `org_kde_plasma_window`), as far as this client
// needs them.
//
// libwayland-client marshals requests and demarshals events by these tables: a message's
// opcode is its index in its table, its signature names each argument's type (`u` uint, `i`
// int, `s` string, `o` object, `?o` object or null, `n` new object, `h` file descriptor; a
// leading number is the version that added the message), and its `types` hold, argument by
// argument, the interface of an object or new object (NULL for the others). The order of the
// messages and their arguments is the order of the protocol's documentation.
//
// Requests are described up to the last one sent (a window's `destroy`), at version 4. A
// window's events are described through opcode 13 (`application_menu`, version 10): KWin 5.27
// sends `parent_window`, `virtual_desktop_entered`/`_left` and `application_menu` whatever
// version the client bound (a version-4 table of 11 events fails on the first window with
// "interface 'org_kde_plasma_window' has no event 11"), and gates the later ones (activities,
// `resource_name_changed`) on the version.

// Arguments that are not objects (and messages without arguments).
static const struct wl_interface *no_objects[] = { NULL, NULL, NULL, NULL, NULL };
// `get_window`: the new window, the internal id.
static const struct wl_interface *a_window_and_an_int[] = { &org_kde_plasma_window_interface, NULL };
// `parent_window` (nullable).
static const struct wl_interface *a_window[] = { &org_kde_plasma_window_interface };
// `set_minimized_geometry`: panel, x, y, width, height.
static const struct wl_interface *a_surface_and_four_ints[] = { &wl_surface_interface, NULL, NULL, NULL, NULL };
// `unset_minimized_geometry`.
static const struct wl_interface *a_surface[] = { &wl_surface_interface };

static const struct wl_message manager_requests[] = {
    { "show_desktop", "u", no_objects },
    { "get_window", "nu", a_window_and_an_int },
};

static const struct wl_message manager_events[] = {
    { "show_desktop_changed", "u", no_objects },
    { "window", "u", no_objects },
};

const struct wl_interface org_kde_plasma_window_management_interface = {
    "org_kde_plasma_window_management", NOTIFYBUS_PLASMA_WINDOW_MANAGEMENT_VERSION,
    2, manager_requests,
    2, manager_events,
};

static const struct wl_message window_requests[] = {
    { "set_state", "uu", no_objects },
    { "set_virtual_desktop", "u", no_objects },
    { "set_minimized_geometry", "ouuuu", a_surface_and_four_ints },
    { "unset_minimized_geometry", "o", a_surface },
    { "close", "", no_objects },
    { "request_move", "3", no_objects },
    { "request_resize", "3", no_objects },
    { "destroy", "4", no_objects },
};

static const struct wl_message window_events[] = {
    { "title_changed", "s", no_objects },
    { "app_id_changed", "s", no_objects },
    { "state_changed", "u", no_objects },
    { "virtual_desktop_changed", "i", no_objects },
    { "themed_icon_name_changed", "s", no_objects },
    { "unmapped", "", no_objects },
    { "initial_state", "4", no_objects },
    { "parent_window", "5?o", a_window },
    { "geometry", "6iiuu", no_objects },
    { "icon_changed", "7", no_objects },
    { "pid_changed", "u", no_objects },
    { "virtual_desktop_entered", "8s", no_objects },
    { "virtual_desktop_left", "8s", no_objects },
    { "application_menu", "10ss", no_objects },
};

const struct wl_interface org_kde_plasma_window_interface = {
    "org_kde_plasma_window", NOTIFYBUS_PLASMA_WINDOW_MANAGEMENT_VERSION,
    8, window_requests,
    14, window_events,
};
