/*
 * The two libsystemd functions that libdbus's static archive refers to, for a binary that links
 * libdbus statically without libsystemd (scripts/build-static-ld).
 *
 * libdbus calls them only to listen on sockets passed by systemd socket activation, which a D-Bus
 * server does (dbus-daemon's `systemd:` listen address); notifywatch and notifybusd are clients
 * and never listen. sd_listen_fds answers as libsystemd does for a process that was passed no
 * sockets, and libdbus asks sd_is_socket only about the sockets it was passed, so that is never
 * called; it says it cannot tell.
 */
#include <errno.h>

int sd_listen_fds(int unset_environment) {
    (void)unset_environment;
    return 0;
}

int sd_is_socket(int fd, int family, int type, int listening) {
    (void)fd; (void)family; (void)type; (void)listening;
    return -ENOSYS;
}
