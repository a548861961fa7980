#!/usr/bin/env bash
# Latency from a uevent to a subscriber's callback, side by side with a bare libudev
# monitor receiving the same uevents under umockdev, in one process and one run
# (Benchmarks/README.md, "Targets": the bus may add at most 10%).
#
#   Benchmarks/uevent-latency.sh                 # the Markdown tables on stdout, progress on stderr
#   Benchmarks/uevent-latency.sh --events 4000   # any option of UeventLatency (see its main.swift)
#
# Builds Benchmarks/UeventLatency (release; a package of its own), runs it (it re-executes itself
# under LD_PRELOAD=libumockdev-preload.so.0), then its --stages breakdown. Needs libudev-dev and
# libumockdev-dev (Debian/Ubuntu: apt-get install libudev-dev libumockdev-dev umockdev).
# About 15 s after the first build.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
package="$here/UeventLatency"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

echo "uevent-latency.sh: building UeventLatency (release)" >&2
swift build -c release --package-path "$package" >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
binary="$(swift build -c release --package-path "$package" --show-bin-path)/UeventLatency"

echo "uevent-latency.sh: measuring" >&2
"$binary" "$@"
echo
"$binary" --stages
echo
printf '%s; %s vCPUs (%s); umockdev %s; produced by `Benchmarks/uevent-latency.sh`.\n' \
    "$(swift --version 2>/dev/null | head -1 | sed 's/ (.*//')" "$(nproc)" \
    "$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo unknown CPU)" \
    "$(pkg-config --modversion umockdev-1.0 2>/dev/null || echo '?')"
