#!/usr/bin/env bash
# Latency from a uevent to a subscriber's callback, side by side with a bare libudev
# monitor receiving the same uevents under umockdev, in one process and one run
# (Benchmarks/README.md, "Targets": the bus may add at most 10%).
#
#   Benchmarks/uevent-latency.sh                 # the Markdown tables on stdout and in
#                                                # Benchmarks/results/uevent-latency*.md, progress on stderr
#   Benchmarks/uevent-latency.sh --events 4000   # any option of UeventLatency (see its main.swift)
#
# Builds UeventLatency (Benchmarks/Processes, release), runs it (it re-executes itself
# under LD_PRELOAD=libumockdev-preload.so.0), then its --stages breakdown. Needs libudev-dev and
# libumockdev-dev (Debian/Ubuntu: apt-get install libudev-dev libumockdev-dev umockdev).
# About 15 s after the first build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source Benchmarks/common.sh
bench_product UeventLatency
bench_run_note "umockdev $(pkg-config --modversion umockdev-1.0 2>/dev/null || echo '?')"
echo "uevent-latency.sh: measuring" >&2
"$bench_bin/UeventLatency" "$@"
"$bench_bin/UeventLatency" --stages
