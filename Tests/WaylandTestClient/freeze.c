#include "client.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

// `--freeze-on-activate APP_ID CGROUP_DIR`: a bare client of the foreign-toplevel protocol that
// writes cgroup.freeze on `activated`, the benchmarks' anchor. Once the first list is in it
// writes `0` to CGROUP_DIR/cgroup.freeze if a toplevel of APP_ID is activated, else `1`; then
// again at each change, from the `done` (or `closed`) that brings it. After each write it
// prints `NANOSECONDS VALUE` (CLOCK_MONOTONIC). It ends on SIGTERM or SIGINT (status 0) or when
// the compositor goes away (status 2), writing `0` first when it had frozen the group.

struct freezer {
    const char *app_id;
    int descriptor;
    /// The value last written: '0', '1', or 0 before the first.
    char written;
    bool started;
};

static void write_freeze(struct freezer *freezer, char value) {
    if (pwrite(freezer->descriptor, &value, 1, 0) != 1) {
        fprintf(stderr, "WaylandTestClient: writing cgroup.freeze: %s\n", strerror(errno));
        exit(1);
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    freezer->written = value;
    printf("%lld %c\n", (long long)now.tv_sec * 1000000000LL + now.tv_nsec, value);
}

static void changed(struct client *client) {
    struct freezer *freezer = client->context;
    if (!freezer->started) return;
    bool activated = false;
    for (struct toplevel *toplevel = client->toplevels; toplevel; toplevel = toplevel->next) {
        if (toplevel->listed && (toplevel->state & STATE_ACTIVATED) && strcmp(toplevel->app_id, freezer->app_id) == 0) {
            activated = true;
        }
    }
    char value = activated ? '0' : '1';
    if (value != freezer->written) write_freeze(freezer, value);
}

static struct freezer *the_freezer;

static void thaw_at_exit(void) {
    if (the_freezer && the_freezer->written == '1') write_freeze(the_freezer, '0');
}

int freeze_on_activate(const char *app_id, const char *cgroup_directory) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    char path[4096];
    if (snprintf(path, sizeof path, "%s/cgroup.freeze", cgroup_directory) >= (int)sizeof path) {
        fputs("WaylandTestClient: the cgroup directory's path is too long\n", stderr);
        return 64;
    }
    static struct freezer freezer;
    freezer.app_id = app_id;
    freezer.descriptor = open(path, O_WRONLY | O_CLOEXEC);
    if (freezer.descriptor < 0) {
        fprintf(stderr, "WaylandTestClient: %s: %s\n", path, strerror(errno));
        return 1;
    }
    the_freezer = &freezer;
    atexit(thaw_at_exit);

    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    sigprocmask(SIG_BLOCK, &signals, NULL);
    int signal_descriptor = signalfd(-1, &signals, SFD_CLOEXEC);

    struct client client = { .changed = changed, .context = &freezer };
    client_connect(&client, false, 10000);
    freezer.started = true;
    changed(&client);

    struct wl_display *display = client.display;
    while (true) {
        while (wl_display_prepare_read(display) != 0) {
            if (wl_display_dispatch_pending(display) < 0) client_lost(&client, "dispatch");
        }
        if (wl_display_flush(display) < 0 && errno != EAGAIN) {
            wl_display_cancel_read(display);
            client_lost(&client, "flush");
        }
        struct pollfd descriptors[2] = {
            { .fd = wl_display_get_fd(display), .events = POLLIN },
            { .fd = signal_descriptor, .events = POLLIN },
        };
        int ready = poll(descriptors, signal_descriptor >= 0 ? 2 : 1, -1);
        if (ready > 0 && descriptors[0].revents) {
            if (wl_display_read_events(display) < 0) client_lost(&client, "read");
        } else {
            wl_display_cancel_read(display);
        }
        if (wl_display_dispatch_pending(display) < 0) client_lost(&client, "dispatch");
        if (ready > 0 && signal_descriptor >= 0 && descriptors[1].revents) break;
    }
    wl_display_disconnect(display);
    return 0;
}
