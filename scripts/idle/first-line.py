#!/usr/bin/env python3
"""Start-up of a command as a user sees it, for scripts/measure-idle.

    first-line.py NAME RUNS COMMAND...

Starts COMMAND RUNS times (after one run not counted) and times each from just before the
process is started to the end of the first line it writes on standard output; then ends it with
SIGTERM. Prints one Markdown table row: NAME, the median and the range in milliseconds. When the
command writes no line, the row says so and the exit status is 1.
"""
import signal
import statistics
import subprocess
import sys
import time


def first_line(command):
    start = time.monotonic()
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    line = process.stdout.readline()
    elapsed = time.monotonic() - start
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    return elapsed * 1000 if line else None


def main():
    name, runs, command = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    first_line(command)
    times = []
    for _ in range(runs):
        elapsed = first_line(command)
        if elapsed is None:
            print(f"| {name} | not measured: `{command[0]}` wrote no line | |")
            return 1
        times.append(elapsed)
    print(f"| {name} | {statistics.median(times):.1f} | {min(times):.1f}–{max(times):.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
