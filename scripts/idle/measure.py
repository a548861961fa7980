#!/usr/bin/env python3
"""Idle wake-ups and RSS of a command, for scripts/measure-idle.

    measure.py NAME SECONDS COMMAND...

Runs COMMAND twice: for 2 s, then for 2 + SECONDS s, each time ended with SIGTERM
and reaped with wait4, whose resource usage counts every thread the process ever
had. Wake-ups = voluntary context switches of the long run minus those of the short
run (what SECONDS of idling cost, start-up and shut-down cancelling out), given per 10 s. RSS is read
from /proc just before the long run ends. Prints one Markdown table row.
"""
import os
import signal
import subprocess
import sys
import time

STARTUP = 2.0


def run(command, seconds):
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(seconds)
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
    short, _, _ = run(command, STARTUP)
    long, rss, threads = run(command, STARTUP + seconds)
    per10 = max(0, long - short) * 10 / seconds
    print(f"| {name} | {per10:.1f} | {rss} | {threads} |")


if __name__ == "__main__":
    main()
