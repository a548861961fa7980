#!/usr/bin/env bash
# Latency from a PSI memory-pressure trigger to a subscriber's callback, against a bare C program
# polling the same trigger ("some 100000 2000000") on the same pressure file at the same time, under
# real pressure: a memory hog in a cgroup limited to 16 MiB (Tests/README.md, "Memory pressure").
# Both are measured from the same start, the hog's first touch (CLOCK_MONOTONIC), since the kernel's
# trigger instant cannot be seen (Benchmarks/README.md, "Targets": the bus may add at most 10%).
#
#   Benchmarks/pressure-latency.sh                  # the Markdown tables on stdout, progress on stderr
#   Benchmarks/pressure-latency.sh --samples 12     # any option of PressureLatency (see its main.swift)
#
# Builds Benchmarks/PressureLatency (release; a package of its own, the C program a target of it)
# and runs it. Needs root (it mounts a cgroup2 and a cgroup v1 memory hierarchy in a scratch
# directory under /var/tmp) and PSI (/proc/pressure). Each sample takes about 13 s (the trigger
# fires ~2 s into the load; the level returns to normal 10 s after the last trigger): 8 samples,
# the default, take about 2 minutes after the first build.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
package="$here/PressureLatency"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

[ "$(id -u)" -eq 0 ] || { echo "pressure-latency.sh: needs root (cgroup mounts)" >&2; exit 1; }
echo "pressure-latency.sh: building PressureLatency (release)" >&2
swift build -c release --package-path "$package" >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
binary="$(swift build -c release --package-path "$package" --show-bin-path)/PressureLatency"

echo "pressure-latency.sh: measuring" >&2
"$binary" "$@"
echo
printf '%s; %s vCPUs (%s); Linux %s; produced by `Benchmarks/pressure-latency.sh%s`.\n' \
    "$(swift --version 2>/dev/null | head -1 | sed 's/ (.*//')" "$(nproc)" \
    "$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo unknown CPU)" \
    "$(uname -r)" "${*:+ $*}"
