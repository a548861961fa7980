#!/usr/bin/env bash
# notifybusd side by side with its anchors, each in one run (Benchmarks/Processes, DaemonBench):
#   frozen   a subscriber frozen by the cgroup v2 freezer while 10 keys change 1,000 times:
#            through notifybusd vs a raw D-Bus match rule on the same signals (messages after the
#            thaw, time until it holds every current value)
#   latency  a portal signal → a subscriber through notifybusd vs a raw libdbus subscriber (p50, p99)
#   fanout   one change → the last of 100 connections: notifybusd's unicast Events vs a raw libdbus
#            sender of the same 100 unicast Events (the goal's anchor) and vs dbus-daemon
#            broadcasting one signal to 100 match rules (p50, p99, CPU per change)
#   attacks  a well-behaved subscriber's live latency (p50, p99) and notifybusd's peak memory under
#            each hostile client of the specification (D-Bus interface) (an attacker process at full speed: 8 MB and 30 MB
#            bodies, patterns at the limits, Subscribe/Cancel pairs, a mixed flood, a client that
#            never reads, a stopped one) vs the same subscriber with no attacker and the daemon idle;
#            and another client's `Get Version` (p99), where the attacker's messages pass 8 MiB (b, h:
#            30 MB bodies) vs a plain libdbus service (`DaemonBench plain`) on the same bus under the
#            same attacker in the same run (both p99s and their ratio)
# The idle cost and memory are scripts/measure-idle-daemon's.
#
#   Benchmarks/daemon-bench.sh                       # all four; Markdown on stdout and in Benchmarks/results
#                                                    # (daemon-frozen.md, daemon-latency.md, …), progress on stderr
#   Benchmarks/daemon-bench.sh latency --signals 4000 # one of them, with its options (DaemonBench's files)
#
# Each run starts a private dbus-daemon, serves the XDG portal's Settings interface itself (so
# every signal's send time is its own clock) and runs `notifybusd --source settings` on that bus.
# `frozen` needs root and a cgroup2 mount (it makes a group under the first one in
# /proc/self/mountinfo). Needs dbus-daemon and libdbus-1-dev (scripts/bootstrap installs them).
# About 3 minutes after the first build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source Benchmarks/common.sh

bench_build "notifybusd (release)" swift build -c release --product notifybusd
bench_product DaemonBench
notifybusd="$(swift build -c release --show-bin-path)/notifybusd"
bench="$bench_bin/DaemonBench"
bench_run_note "dbus-daemon $(dbus-daemon --version 2>/dev/null | head -1 | awk '{ print $NF }')"

run() {  # benchmark, options...
    local name="$1"; shift
    echo "daemon-bench.sh: $name" >&2
    "$bench" "$name" --notifybusd "$notifybusd" "$@"
}

if [ $# -gt 0 ]; then
    run "$@"
else
    if [ "$(id -u)" -eq 0 ] && grep -q " - cgroup2 " /proc/self/mountinfo; then
        run frozen
    else
        echo "(frozen: not measured: it needs root and a cgroup2 mount)"
        echo
    fi
    run latency
    run fanout
    run attacks
fi
