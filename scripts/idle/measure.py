#!/usr/bin/env python3
"""Idle wake-ups and RSS of a command, for scripts/measure-idle.

    measure.py NAME SECONDS COMMAND...

Runs COMMAND, lets it settle for 4 s, then reads the voluntary context switches of
each of its threads (/proc/PID/task/TID/status) once a second for SECONDS s: the
wake-ups are what every thread added in that window (a thread that starts within it
counts from 0), in the window and per 10 s, with the threads that woke and how often.
RSS and the number of threads are read at the window's end; then the command is
ended with SIGTERM. Prints one Markdown table row; when the command cannot start or
exits before it is ended, the row says so (with the end of its standard error) and
the exit status is 1.
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

SETTLE = 4.0


class NotMeasured(Exception):
    pass


def threads(pid):
    """{tid: (name, voluntary switches)} of the process now; {} when it is gone."""
    found = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return found
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches:"):
                        found[tid] = (name, int(line.split()[1]))
        except (FileNotFoundError, ProcessLookupError):
            pass
    return found


def status_field(pid, field):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except FileNotFoundError:
        pass
    return 0


def measure(process, seconds):
    """(wake-ups, {thread: wake-ups}, RSS, threads), or None when the process exited early."""
    start = time.monotonic()
    time.sleep(SETTLE)
    last = threads(process.pid)
    woke = {}
    for step in range(1, int(seconds) + 1):
        time.sleep(max(0.0, start + SETTLE + step - time.monotonic()))
        now = threads(process.pid)
        if process.poll() is not None:
            return None
        for tid, (name, count) in now.items():
            added = count - last.get(tid, (name, 0))[1]
            if added > 0:
                label = f"{name} ({tid})"
                woke[label] = woke.get(label, 0) + added
        last = now
    return sum(woke.values()), woke, status_field(process.pid, "VmRSS"), status_field(process.pid, "Threads")


def main():
    name, seconds, command = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    with tempfile.TemporaryFile() as errors:
        try:
            process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors)
        except OSError as error:
            print(f"| {name} | not measured: cannot start `{command[0]}`: {error.strerror} | | | | |")
            return 1
        try:
            result = measure(process, seconds)
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
            process.wait()
        if result is None:
            errors.seek(0)
            tail = " ".join(errors.read().decode(errors="replace").split())[-160:].replace("|", "/")
            print(f"| {name} | not measured: `{command[0]}` exited with status {process.returncode} before it was ended: {tail} | | | | |")
            return 1
    wakes, woke, rss, count = result
    where = ", ".join(f"{thread} {n}" for thread, n in sorted(woke.items())) or "none"
    print(f"| {name} | {wakes} | {wakes * 10 / seconds:.1f} | {rss} | {count} | {where} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
