#!/usr/bin/env bash
# The cost of one read of each clock a publish could stamp its events with (Benchmarks/ClockCost):
# a Markdown table on stdout. Compiled with the Swift toolchain's clang (or cc), -O2; a few seconds.
#
#   Benchmarks/clock-cost.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
compiler="$(command -v clang || command -v cc)" || { echo "clock-cost.sh: needs clang or cc" >&2; exit 1; }
binary="$(mktemp)"
trap 'rm -f "$binary"' EXIT
"$compiler" -O2 -o "$binary" "$here/ClockCost/clock-cost.c"
"$binary"
echo
echo "$(nproc) vCPUs ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo unknown CPU)); clock source $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo unknown); produced by \`Benchmarks/clock-cost.sh\`."
