/*
 * The two libsystemd functions that libdbus's static archive refers to, for a binary that links
 * libdbus statically without libsystemd (scripts/build-static-ld).
 *
 * libdbus calls them only to listen on sockets passed by systemd socket activation, which a D-Bus
 * server does (dbus-daemon's `systemd:` listen address); notifywatch and notifybusd are clients
 * and never listen. sd_listen_fds answers as libsystemd does for a process that was passed no
 * sockets; sd_is_socket checks the descriptor as libsystemd does.
 */
#include <errno.h>
#include <sys/socket.h>
#include <sys/stat.h>

int sd_listen_fds(int unset_environment) {
    (void)unset_environment;
    return 0;
}

int sd_is_socket(int fd, int family, int type, int listening) {
    struct stat st;
    if (fd < 0) return -EBADF;
    if (fstat(fd, &st) < 0) return -errno;
    if (!S_ISSOCK(st.st_mode)) return 0;
    if (type != 0) {
        int actual = 0;
        socklen_t length = sizeof actual;
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &actual, &length) < 0) return -errno;
        if (length != sizeof actual || actual != type) return 0;
    }
    if (listening >= 0) {
        int accepting = 0;
        socklen_t length = sizeof accepting;
        if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &length) < 0) return -errno;
        if (length != sizeof accepting || !accepting != !listening) return 0;
    }
    if (family > 0) {
        struct sockaddr_storage address;
        socklen_t length = sizeof address;
        if (getsockname(fd, (struct sockaddr *)&address, &length) < 0) return -errno;
        if (length < sizeof(sa_family_t) || address.ss_family != family) return 0;
    }
    return 1;
}
