#include "CWlrTestProtocols.h"

#include <stddef.h>

// The message tables of wlr-virtual-pointer-unstable-v1 (version 1) and
// wlr-layer-shell-unstable-v1 (version 3), in the order of the protocols' documentation (a
// message's opcode is its index). Signatures: `u` uint, `i` int, `f` fixed, `s` string, `o`
// object, `?o` object or null, `n` new object; a leading number is the version that added the
// message. `types` hold, argument by argument, the interface of an object or new object (NULL
// for the others).

static const struct wl_interface *no_objects[] = { NULL, NULL, NULL, NULL, NULL };

// create_virtual_pointer: seat (nullable), new virtual pointer.
static const struct wl_interface *a_seat_and_a_pointer[] = { &wl_seat_interface, &zwlr_virtual_pointer_v1_interface };
// get_layer_surface: new layer surface, surface, output (nullable), layer, namespace.
static const struct wl_interface *a_layer_surface_request[] = {
    &zwlr_layer_surface_v1_interface, &wl_surface_interface, &wl_output_interface, NULL, NULL,
};
// get_popup takes an xdg_popup, an interface these tests never make: a request's object
// argument is marshalled by its id alone, so its type is left NULL.

static const struct wl_message virtual_pointer_manager_requests[] = {
    { "create_virtual_pointer", "?on", a_seat_and_a_pointer },
};

const struct wl_interface zwlr_virtual_pointer_manager_v1_interface = {
    "zwlr_virtual_pointer_manager_v1", 1,
    1, virtual_pointer_manager_requests,
    0, NULL,
};

static const struct wl_message virtual_pointer_requests[] = {
    { "motion", "uff", no_objects },
    { "motion_absolute", "uuuuu", no_objects },
    { "button", "uuu", no_objects },
    { "axis", "uuf", no_objects },
    { "frame", "", no_objects },
    { "axis_source", "u", no_objects },
    { "axis_stop", "uu", no_objects },
    { "axis_discrete", "uufi", no_objects },
    { "destroy", "", no_objects },
};

const struct wl_interface zwlr_virtual_pointer_v1_interface = {
    "zwlr_virtual_pointer_v1", 1,
    9, virtual_pointer_requests,
    0, NULL,
};

static const struct wl_message layer_shell_requests[] = {
    { "get_layer_surface", "no?ous", a_layer_surface_request },
    { "destroy", "3", no_objects },
};

const struct wl_interface zwlr_layer_shell_v1_interface = {
    "zwlr_layer_shell_v1", 3,
    2, layer_shell_requests,
    0, NULL,
};

static const struct wl_message layer_surface_requests[] = {
    { "set_size", "uu", no_objects },
    { "set_anchor", "u", no_objects },
    { "set_exclusive_zone", "i", no_objects },
    { "set_margin", "iiii", no_objects },
    { "set_keyboard_interactivity", "u", no_objects },
    { "get_popup", "o", no_objects },
    { "ack_configure", "u", no_objects },
    { "destroy", "", no_objects },
    { "set_layer", "2u", no_objects },
};

static const struct wl_message layer_surface_events[] = {
    { "configure", "uuu", no_objects },
    { "closed", "", no_objects },
};

const struct wl_interface zwlr_layer_surface_v1_interface = {
    "zwlr_layer_surface_v1", 3,
    9, layer_surface_requests,
    2, layer_surface_events,
};
