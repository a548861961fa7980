#define _GNU_SOURCE
#include "client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

// `cover` and `uncover`: a top-layer surface over the whole output with exclusive keyboard
// interactivity, as Phosh's overview and lock screen are, mapped and destroyed.

static struct {
    struct wl_surface *surface;
    struct zwlr_layer_surface_v1 *layer_surface;
    struct wl_buffer *buffer;
    bool configured;
    uint32_t serial, width, height;
    bool closed;
} the_cover;

static void layer_configure(void *data, struct zwlr_layer_surface_v1 *surface, uint32_t serial, uint32_t width,
                            uint32_t height) {
    (void)data;
    the_cover.configured = true;
    the_cover.serial = serial;
    the_cover.width = width;
    the_cover.height = height;
    // A later configure (the output changed) is acked at once; the buffer stays.
    if (the_cover.buffer) notifybus_layer_surface_ack_configure(surface, serial);
}

static void layer_closed(void *data, struct zwlr_layer_surface_v1 *surface) {
    (void)data, (void)surface;
    the_cover.closed = true;
}

static const struct zwlr_layer_surface_v1_listener layer_listener = {
    .configure = layer_configure,
    .closed = layer_closed,
};

// An opaque black XRGB8888 buffer of `width` x `height` in a memfd's shared memory.
static struct wl_buffer *make_buffer(struct wl_shm *shm, uint32_t width, uint32_t height) {
    size_t stride = (size_t)width * 4, size = stride * height;
    int fd = memfd_create("notifybus-test-cover", MFD_CLOEXEC);
    if (fd < 0) return NULL;
    if (ftruncate(fd, (off_t)size) != 0) {
        close(fd);
        return NULL;
    }
    void *pixels = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (pixels == MAP_FAILED) {
        close(fd);
        return NULL;
    }
    uint32_t *pixel = pixels;
    for (size_t i = 0; i < size / 4; i++) pixel[i] = 0xff000000;
    munmap(pixels, size);
    struct wl_shm_pool *pool = wl_shm_create_pool(shm, fd, (int32_t)size);
    struct wl_buffer *buffer =
        wl_shm_pool_create_buffer(pool, 0, (int32_t)width, (int32_t)height, (int32_t)stride, WL_SHM_FORMAT_XRGB8888);
    wl_shm_pool_destroy(pool);
    close(fd);
    return buffer;
}

static bool configured_or_closed(struct client *client, const void *argument) {
    (void)client, (void)argument;
    return the_cover.configured || the_cover.closed;
}

static bool none_activated(struct client *client, const void *argument) {
    (void)argument;
    return the_cover.closed || !client_any_activated(client);
}

static void destroy_cover(void) {
    if (the_cover.layer_surface) notifybus_layer_surface_destroy(the_cover.layer_surface);
    if (the_cover.surface) wl_surface_destroy(the_cover.surface);
    if (the_cover.buffer) wl_buffer_destroy(the_cover.buffer);
    memset(&the_cover, 0, sizeof the_cover);
}

void cover(struct client *client, int timeout_ms) {
    if (!client->layer_shell || !client->compositor || !client->shm) {
        puts("error the compositor has no zwlr_layer_shell_v1 (or wl_compositor, wl_shm)");
        return;
    }
    if (the_cover.surface) {
        puts("error already covered");
        return;
    }
    the_cover.surface = wl_compositor_create_surface(client->compositor);
    the_cover.layer_surface = notifybus_layer_shell_get_layer_surface(
        client->layer_shell, the_cover.surface, NULL, ZWLR_LAYER_SHELL_V1_LAYER_TOP, "notifybus-test-cover");
    notifybus_layer_surface_add_listener(the_cover.layer_surface, &layer_listener, NULL);
    notifybus_layer_surface_set_anchor(the_cover.layer_surface,
                                       ZWLR_LAYER_SURFACE_V1_ANCHOR_TOP | ZWLR_LAYER_SURFACE_V1_ANCHOR_BOTTOM |
                                           ZWLR_LAYER_SURFACE_V1_ANCHOR_LEFT | ZWLR_LAYER_SURFACE_V1_ANCHOR_RIGHT);
    notifybus_layer_surface_set_size(the_cover.layer_surface, 0, 0);
    notifybus_layer_surface_set_exclusive_zone(the_cover.layer_surface, -1);
    notifybus_layer_surface_set_keyboard_interactivity(the_cover.layer_surface,
                                                       ZWLR_LAYER_SURFACE_V1_KEYBOARD_INTERACTIVITY_EXCLUSIVE);
    wl_surface_commit(the_cover.surface);
    if (!client_wait(client, configured_or_closed, NULL, timeout_ms) || the_cover.closed) {
        printf("error the layer surface was %s\n", the_cover.closed ? "closed" : "not configured");
        destroy_cover();
        return;
    }
    notifybus_layer_surface_ack_configure(the_cover.layer_surface, the_cover.serial);
    uint32_t width = the_cover.width ? the_cover.width : 1, height = the_cover.height ? the_cover.height : 1;
    the_cover.buffer = make_buffer(client->shm, width, height);
    if (!the_cover.buffer) {
        puts("error cannot make a shared-memory buffer");
        destroy_cover();
        return;
    }
    wl_surface_attach(the_cover.surface, the_cover.buffer, 0, 0);
    wl_surface_damage(the_cover.surface, 0, 0, (int32_t)width, (int32_t)height);
    wl_surface_commit(the_cover.surface);
    if (!client_roundtrip(client, timeout_ms)) {
        puts("error no answer after the layer surface's commit");
        return;
    }
    if (!client_wait(client, none_activated, NULL, timeout_ms) || the_cover.closed) {
        printf("error %s\n", the_cover.closed ? "the layer surface was closed" : "a toplevel is still activated");
        return;
    }
    printf("ok %ux%u\n", width, height);
}

void uncover(struct client *client, int timeout_ms) {
    if (!the_cover.surface) {
        puts("error not covered");
        return;
    }
    destroy_cover();
    if (!client_roundtrip(client, timeout_ms)) {
        puts("error no answer after the layer surface's destruction");
        return;
    }
    fputs("ok", stdout);
    for (struct toplevel *toplevel = client->toplevels; toplevel; toplevel = toplevel->next) {
        if (toplevel->listed && (toplevel->state & STATE_ACTIVATED)) printf(" %s", toplevel->app_id);
    }
    putchar('\n');
}
