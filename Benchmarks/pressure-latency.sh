#!/usr/bin/env bash
# Latency from a PSI memory-pressure trigger to a subscriber's callback, against a bare C program
# polling the same trigger ("some 100000 2000000") on the same pressure file at the same time, under
# real pressure: a memory hog in a cgroup limited to 16 MiB (Tests/README.md, "Memory pressure").
# Both are measured from the same start, the hog's first touch (CLOCK_MONOTONIC), since the kernel's
# trigger instant cannot be seen (Benchmarks/README.md, "Targets": the bus may add at most 10%).
#
#   Benchmarks/pressure-latency.sh                  # the Markdown tables on stdout and in
#                                                   # Benchmarks/results/pressure-latency.md, progress on stderr
#   Benchmarks/pressure-latency.sh --samples 12     # any option of PressureLatency (see its main.swift)
#
# Builds PressureLatency and its C program (Benchmarks/Processes, release) and runs it. Needs root
# (it mounts a cgroup2 and a cgroup v1 memory hierarchy in a scratch directory under /var/tmp) and PSI (/proc/pressure). Each sample takes about 13 s (the trigger
# fires ~2 s into the load; the level returns to normal 10 s after the last trigger): 8 samples,
# the default, take about 2 minutes after the first build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source Benchmarks/common.sh
[ "$(id -u)" -eq 0 ] || { echo "pressure-latency.sh: needs root (cgroup mounts)" >&2; exit 1; }
bench_product PressureLatency pressure-poll
bench_run_note "Linux $(uname -r)"
echo "pressure-latency.sh: measuring" >&2
"$bench_bin/PressureLatency" "$@"
