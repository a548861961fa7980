// The tests' own Wayland client (Tests/README.md, "phoc headless"): it follows the toplevels
// through zwlr_foreign_toplevel_manager_v1 (version 3), makes a virtual pointer so that the
// compositor has a seat, and takes one command per line on standard input, answering one line
// on standard output (`ok …` or `error …`):
//
//   list              ok APP_ID:STATE … for each listed toplevel, in the order announced
//                     (STATE: its flags joined by commas: maximized, minimized, activated,
//                     fullscreen)
//   wait APP_ID       ok once a toplevel with that app id is listed
//   gone APP_ID       ok once none is
//   activate APP_ID   activate(seat) on the first toplevel with that app id, as Phosh's overview
//                     does; ok once the compositor reports it activated
//                     (these three take a timeout in milliseconds after the app id)
//   close APP_ID      close() on it; ok after a round trip
//   cover             maps a full-output top-layer surface with exclusive keyboard interactivity
//                     (Phosh's overview, its lock screen); ok WxH once no toplevel is activated
//   uncover           destroys it; ok APP_ID… of the toplevels activated after a round trip
//   sync              a round trip; ok
//
// It prints `ready` once connected (`ready no-seat` when no wl_seat came), and exits with 0 at
// the end of its input, with 2 and a message on standard error when the compositor goes away.
// Every wait gives up after --timeout milliseconds (10000) with `error …`.
//
// `WaylandTestClient --freeze-on-activate APP_ID CGROUP_DIR`: freeze.c.

#include "client.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const state_names[] = { "maximized", "minimized", "activated", "fullscreen" };

static void list(struct client *client) {
    fputs("ok", stdout);
    for (struct toplevel *toplevel = client->toplevels; toplevel; toplevel = toplevel->next) {
        if (!toplevel->listed) continue;
        printf(" %s:", toplevel->app_id);
        const char *separator = "";
        for (unsigned value = 0; value < sizeof state_names / sizeof *state_names; value++) {
            if (toplevel->state & STATE_BIT(value)) {
                printf("%s%s", separator, state_names[value]);
                separator = ",";
            }
        }
    }
    putchar('\n');
}

static bool listed(struct client *client, const void *app_id) { return client_find(client, app_id) != NULL; }

static bool not_listed(struct client *client, const void *app_id) { return client_find(client, app_id) == NULL; }

// Whether `toplevel` (compared by address only: it may be gone) is listed and activated.
static bool is_activated(struct client *client, const void *toplevel) {
    for (struct toplevel *each = client->toplevels; each; each = each->next) {
        if (each == toplevel) return each->listed && (each->state & STATE_ACTIVATED);
    }
    return false;
}

static void activate(struct client *client, const char *app_id, int timeout_ms) {
    struct toplevel *toplevel = client_find(client, app_id);
    if (!toplevel) {
        printf("error no toplevel %s\n", app_id);
        return;
    }
    if (!client->seat) {
        puts("error no wl_seat");
        return;
    }
    struct wl_proxy *proxy = (struct wl_proxy *)toplevel->handle;
    wl_proxy_marshal_flags(proxy, ZWLR_FOREIGN_TOPLEVEL_HANDLE_V1_ACTIVATE, NULL, wl_proxy_get_version(proxy), 0,
                           client->seat);
    if (client_wait(client, is_activated, toplevel, timeout_ms)) {
        puts("ok");
    } else {
        printf("error %s not activated after %d ms\n", app_id, timeout_ms);
    }
}

static void close_toplevel(struct client *client, const char *app_id, int timeout_ms) {
    struct toplevel *toplevel = client_find(client, app_id);
    if (!toplevel) {
        printf("error no toplevel %s\n", app_id);
        return;
    }
    struct wl_proxy *proxy = (struct wl_proxy *)toplevel->handle;
    wl_proxy_marshal_flags(proxy, ZWLR_FOREIGN_TOPLEVEL_HANDLE_V1_CLOSE, NULL, wl_proxy_get_version(proxy), 0);
    puts(client_roundtrip(client, timeout_ms) ? "ok" : "error no answer");
}

static void run(struct client *client, char *line, int timeout_ms) {
    char *argument = strchr(line, ' ');
    if (argument) *argument++ = '\0';
    bool has_argument = argument && *argument;
    // An app id's command may end with its own timeout: `activate APP_ID MS`.
    char *timeout = has_argument ? strchr(argument, ' ') : NULL;
    if (timeout) {
        *timeout++ = '\0';
        timeout_ms = atoi(timeout);
        if (timeout_ms <= 0) {
            printf("error bad timeout %s\n", timeout);
            return;
        }
    }
    if (strcmp(line, "list") == 0) {
        list(client);
    } else if (strcmp(line, "sync") == 0) {
        puts(client_roundtrip(client, timeout_ms) ? "ok" : "error no answer");
    } else if (strcmp(line, "cover") == 0) {
        cover(client, timeout_ms);
    } else if (strcmp(line, "uncover") == 0) {
        uncover(client, timeout_ms);
    } else if (strcmp(line, "activate") == 0 && has_argument) {
        activate(client, argument, timeout_ms);
    } else if (strcmp(line, "close") == 0 && has_argument) {
        close_toplevel(client, argument, timeout_ms);
    } else if (strcmp(line, "wait") == 0 && has_argument) {
        if (client_wait(client, listed, argument, timeout_ms)) {
            puts("ok");
        } else {
            printf("error no toplevel %s after %d ms\n", argument, timeout_ms);
        }
    } else if (strcmp(line, "gone") == 0 && has_argument) {
        if (client_wait(client, not_listed, argument, timeout_ms)) {
            puts("ok");
        } else {
            printf("error %s still listed after %d ms\n", argument, timeout_ms);
        }
    } else {
        printf("error unknown command %s\n", line);
    }
}

static int usage(void) {
    fputs("usage: WaylandTestClient [--timeout MS]\n"
          "       WaylandTestClient --freeze-on-activate APP_ID CGROUP_DIR\n",
          stderr);
    return 64;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    int timeout_ms = 10000;
    if (argc == 4 && strcmp(argv[1], "--freeze-on-activate") == 0) return freeze_on_activate(argv[2], argv[3]);
    if (argc == 3 && strcmp(argv[1], "--timeout") == 0) {
        timeout_ms = atoi(argv[2]);
        if (timeout_ms <= 0) return usage();
    } else if (argc != 1) {
        return usage();
    }

    struct client client = { 0 };
    client_connect(&client, true, timeout_ms);
    puts(client.seat ? "ready" : "ready no-seat");

    char buffer[4096];
    size_t filled = 0;
    while (true) {
        struct wl_display *display = client.display;
        while (wl_display_prepare_read(display) != 0) {
            if (wl_display_dispatch_pending(display) < 0) client_lost(&client, "dispatch");
        }
        if (wl_display_flush(display) < 0 && errno != EAGAIN) {
            wl_display_cancel_read(display);
            client_lost(&client, "flush");
        }
        struct pollfd descriptors[2] = {
            { .fd = STDIN_FILENO, .events = POLLIN },
            { .fd = wl_display_get_fd(display), .events = POLLIN },
        };
        if (poll(descriptors, 2, -1) < 0 && errno != EINTR) {
            wl_display_cancel_read(display);
            perror("WaylandTestClient: poll");
            return 1;
        }
        if (descriptors[1].revents) {
            if (wl_display_read_events(display) < 0) client_lost(&client, "read");
        } else {
            wl_display_cancel_read(display);
        }
        if (wl_display_dispatch_pending(display) < 0) client_lost(&client, "dispatch");
        if (!descriptors[0].revents) continue;
        ssize_t count = read(STDIN_FILENO, buffer + filled, sizeof buffer - 1 - filled);
        if (count < 0 && errno == EINTR) continue;
        if (count <= 0) break;
        filled += (size_t)count;
        char *newline;
        while ((newline = memchr(buffer, '\n', filled))) {
            *newline = '\0';
            run(&client, buffer, timeout_ms);
            filled -= (size_t)(newline + 1 - buffer);
            memmove(buffer, newline + 1, filled);
        }
        if (filled == sizeof buffer - 1) {
            puts("error line too long");
            filled = 0;
        }
    }
    wl_display_disconnect(client.display);
    return 0;
}
