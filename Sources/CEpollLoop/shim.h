#ifndef NOTIFYBUS_CEVENTLOOP_SHIM_H
#define NOTIFYBUS_CEVENTLOOP_SHIM_H

// The Linux readiness and timer interfaces the EventLoop module wraps, and glibc's heap
// controls; Swift's Glibc module does not export them.
#include <malloc.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/prctl.h>
#include <sys/vfs.h>

/// Names the calling thread (the kernel keeps 15 bytes). prctl is variadic, so Swift cannot call it.
static inline int notifybus_set_thread_name(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}

/// How many bytes wait to be read on the socket or pipe `fd` (`ioctl(FIONREAD)`); -1 on error.
/// ioctl is variadic, so Swift cannot call it.
static inline int notifybus_readable_bytes(int fd) {
    int count = 0;
    return ioctl(fd, FIONREAD, &count) == 0 ? count : -1;
}

/// Fixes glibc's mmap threshold at `bytes` (`mallopt(M_MMAP_THRESHOLD, …)`): every block that
/// large is then a mapping of its own, given back to the kernel when freed.
static inline int notifybus_fix_mmap_threshold(int bytes) {
    return mallopt(M_MMAP_THRESHOLD, bytes);
}

/// The type of the file system that holds `path` (`statfs`'s `f_type`, a `*_SUPER_MAGIC` number)
/// in `type`; 0, or -1 with `errno` set. Swift's Glibc module does not export `statfs`.
static inline int notifybus_file_system_type(const char *path, long *type) {
    struct statfs info;
    if (statfs(path, &info) != 0) return -1;
    *type = (long)info.f_type;
    return 0;
}

#endif
