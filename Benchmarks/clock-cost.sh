#!/usr/bin/env bash
# The cost of one read of each clock a publish could stamp its events with (Benchmarks' ClockCost
# target, in C): a Markdown table on stdout and in Benchmarks/results/clock-cost.md. A few seconds
# after the first build.
#
#   Benchmarks/clock-cost.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
source ./common.sh
bench_build "ClockCost (release)" swift build -c release --product ClockCost
bench_run_note "clock source $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo unknown)"
"$(swift build -c release --show-bin-path)/ClockCost" | results_file clock-cost
