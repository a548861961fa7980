#!/usr/bin/env python3
"""Idle wake-ups and RSS of a command, for scripts/measure-idle.

    measure.py NAME SECONDS COMMAND...

Runs COMMAND twice: for 4 s (its settling), then for 4 + SECONDS s, each time ended
with SIGTERM and reaped with wait4, whose resource usage counts every thread the
process ever had. Wake-ups = voluntary context switches of the long run minus those
of the short run (what SECONDS of idling after the settling cost, start-up and
shut-down cancelling out), in the window and per 10 s. RSS is read from /proc just
before the long run ends. Prints one Markdown table row; when the command cannot
start or exits before it is ended, the row says so (with the end of its standard
error) and the exit status is 1.
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


def run(command, seconds):
    with tempfile.TemporaryFile() as errors:
        try:
            process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors)
        except OSError as error:
            raise NotMeasured(f"cannot start `{command[0]}`: {error.strerror}")
        result = run_started(process, seconds)
        if result is None:
            errors.seek(0)
            tail = " ".join(errors.read().decode(errors="replace").split())[-160:]
            raise NotMeasured(f"`{command[0]}` exited with status {process.returncode} before it was ended: {tail}")
        return result


def run_started(process, seconds):
    time.sleep(seconds)
    if process.poll() is not None:
        return None
    rss = threads = 0
    try:
        with open(f"/proc/{process.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                if line.startswith("Threads:"):
                    threads = int(line.split()[1])
    except FileNotFoundError:
        pass
    process.send_signal(signal.SIGTERM)
    _, _, usage = os.wait4(process.pid, 0)
    return usage.ru_nvcsw, rss, threads


def main():
    name, seconds, command = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    try:
        short, _, _ = run(command, SETTLE)
        long, rss, threads = run(command, SETTLE + seconds)
    except NotMeasured as problem:
        print(f"| {name} | not measured: {str(problem).replace('|', '/')} | | | |")
        return 1
    wakes = max(0, long - short)
    print(f"| {name} | {wakes} | {wakes * 10 / seconds:.1f} | {rss} | {threads} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
