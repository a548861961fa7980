#!/usr/bin/env bash
# Latency from a D-Bus signal to a subscriber, side by side with a bare libdbus client receiving
# the same broadcast signals on the same private bus, in one process and one run
# (Benchmarks/README.md, "D-Bus signal → subscriber": the bus may add at most 10%).
#
#   Benchmarks/dbus-latency.sh          # the Markdown table on stdout and in Benchmarks/results/dbus-latency.md
#   Benchmarks/dbus-latency.sh 4000     # that many signals (default 2000, after 200 of warm-up)
#
# Builds DBusLatency (Benchmarks/Processes, release) and runs it. Needs dbus-daemon and
# libdbus-1-dev. About 10 s after the first build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source Benchmarks/common.sh
bench_product DBusLatency
bench_run_note "dbus-daemon $(dbus-daemon --version 2>/dev/null | head -1 | awk '{ print $NF }')"
"$bench_bin/DBusLatency" "$@"
