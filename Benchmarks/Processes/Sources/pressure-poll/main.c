// pressure-poll: the bare anchor of PressureLatency, and the memory hog that makes the pressure.
//
//   pressure-poll poll FILE
//       Arms "some 100000 2000000" on the PSI file FILE (Tests/README.md, "Memory pressure":
//       opened O_RDWR|O_NONBLOCK, the trigger written with its NUL), prints "armed", then for
//       each wake-up on POLLPRI one line "some NS", NS the CLOCK_MONOTONIC time taken as poll()
//       returned. Ends when its standard input closes; prints "error" and ends if the trigger
//       reports POLLERR.
//   pressure-poll hog FILE PROCS_FILE...
//       Writes FILE (64 MiB), flushes it and drops it from the page cache, maps it shared, prints
//       "ready" and waits for a line "go". Then it writes its PID to each PROCS_FILE (the
//       cgroup.procs of a v1 memory group limited to 16 MiB and of the cgroup2 group whose
//       memory.pressure is watched), takes CLOCK_MONOTONIC (T0), prints "loading NS" and touches
//       every page of the mapping until it is killed: each touch reads the page back from disk,
//       which stalls it on memory.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static uint64_t monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static void say(const char *line) {
    size_t length = strlen(line);
    if (write(STDOUT_FILENO, line, length) != (ssize_t)length) exit(1);
}

static int poll_trigger(const char *path) {
    int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) { perror(path); return 1; }
    const char trigger[] = "some 100000 2000000";
    if (write(fd, trigger, sizeof trigger) < 0) { perror("writing the trigger"); return 1; }
    say("armed\n");
    struct pollfd fds[2] = { { .fd = fd, .events = POLLPRI }, { .fd = STDIN_FILENO, .events = POLLIN } };
    char line[64];
    for (;;) {
        int ready = poll(fds, 2, -1);
        uint64_t woke = monotonic_ns();
        if (ready < 0) {
            if (errno == EINTR) continue;
            perror("poll");
            return 1;
        }
        if (fds[0].revents & (POLLERR | POLLNVAL)) { say("error\n"); return 1; }
        if (fds[0].revents & POLLPRI) {
            snprintf(line, sizeof line, "some %llu\n", (unsigned long long)woke);
            say(line);
        }
        if (fds[1].revents) {
            char buffer[256];
            if (read(STDIN_FILENO, buffer, sizeof buffer) <= 0) return 0;
        }
    }
}

enum { SIZE = 64 << 20, PAGE = 4096 };

static int hog(const char *path, int count, char **procs) {
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) { perror(path); return 1; }
    static char block[1 << 20];
    memset(block, 'x', sizeof block);
    for (off_t offset = 0; offset < SIZE; offset += sizeof block) {
        if (pwrite(fd, block, sizeof block, offset) != (ssize_t)sizeof block) { perror("pwrite"); return 1; }
    }
    fsync(fd);
    posix_fadvise(fd, 0, SIZE, POSIX_FADV_DONTNEED);
    volatile unsigned char *mapping = mmap(NULL, SIZE, PROT_READ, MAP_SHARED, fd, 0);
    if (mapping == MAP_FAILED) { perror("mmap"); return 1; }
    say("ready\n");
    char line[64];
    if (!fgets(line, sizeof line, stdin) || strcmp(line, "go\n") != 0) return 0;
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    for (int index = 0; index < count; index++) {
        int procs_fd = open(procs[index], O_WRONLY | O_CLOEXEC);
        if (procs_fd < 0 || write(procs_fd, pid, strlen(pid)) < 0) { perror(procs[index]); return 1; }
        close(procs_fd);
    }
    uint64_t start = monotonic_ns();
    snprintf(line, sizeof line, "loading %llu\n", (unsigned long long)start);
    say(line);
    unsigned total = 0;
    for (;;) {
        for (size_t offset = 0; offset < SIZE; offset += PAGE) total += mapping[offset];
    }
    return (int)total;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "poll") == 0) return poll_trigger(argv[2]);
    if (argc >= 4 && strcmp(argv[1], "hog") == 0) return hog(argv[2], argc - 3, argv + 3);
    fprintf(stderr, "usage: pressure-poll poll FILE | pressure-poll hog FILE PROCS_FILE...\n");
    return 2;
}
