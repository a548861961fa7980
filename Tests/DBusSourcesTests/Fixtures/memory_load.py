#!/usr/bin/python3
"""Real memory pressure for the memory source's tests, driven over stdin/stdout
(Tests/README.md, "Memory pressure").

    memory_load.py FILE SECONDS PROCS_FILE...

Writes FILE (64 MiB), flushes it and drops it from the page cache, prints "ready", then waits
for a line "go". Then it moves itself into each PROCS_FILE (the cgroup.procs of a group whose
memory limit is far below 64 MiB, and of the group whose memory.pressure the source watches),
prints "loading", and touches every page of a shared mapping of FILE for SECONDS: each touch
must read the page back from disk, which stalls the process on memory. It prints "done" and
exits. Anonymous memory or a file still in the page cache would give no stall.
"""

import mmap
import os
import sys
import time

SIZE = 64 << 20
PAGE = 4096


def main():
    path, seconds, procs_files = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    block = b"x" * (1 << 20)
    for offset in range(0, SIZE, len(block)):
        os.pwrite(fd, block, offset)
    os.fsync(fd)
    os.posix_fadvise(fd, 0, SIZE, os.POSIX_FADV_DONTNEED)
    mapping = mmap.mmap(fd, SIZE)
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        return
    for procs in procs_files:
        with open(procs, "w") as f:
            f.write(str(os.getpid()))
    print("loading", flush=True)
    end = time.monotonic() + seconds
    total = 0
    while time.monotonic() < end:
        for offset in range(0, SIZE, PAGE):
            total += mapping[offset]
    print("done", flush=True)


if __name__ == "__main__":
    main()
