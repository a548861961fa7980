#!/usr/bin/python3
"""An independent witness of PSI triggers for the memory source's tests.

    pressure_watch.py FILE

Arms "some 100000 2000000" and "full 100000 2000000" on the pressure file FILE, one descriptor
each, prints {"armed": true}, then one line per trigger event:
{"kind": "some" or "full", "t": CLOCK_BOOTTIME seconds}. It ends when its standard input closes.
"""

import json
import os
import select
import sys
import time


def main():
    path = sys.argv[1]
    kinds = {}
    poller = select.poll()
    for kind in ("some", "full"):
        fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)
        os.write(fd, (kind + " 100000 2000000").encode() + b"\0")
        kinds[fd] = kind
        poller.register(fd, select.POLLPRI)
    poller.register(sys.stdin.fileno(), select.POLLIN)
    print(json.dumps({"armed": True}), flush=True)
    while True:
        for fd, events in poller.poll():
            if fd == sys.stdin.fileno():
                if not os.read(fd, 4096):
                    return
            elif events & (select.POLLERR | select.POLLNVAL):
                print(json.dumps({"error": kinds[fd]}), flush=True)
                return
            elif events & select.POLLPRI:
                t = time.clock_gettime(time.CLOCK_BOOTTIME)
                print(json.dumps({"kind": kinds[fd], "t": t}), flush=True)


if __name__ == "__main__":
    main()
