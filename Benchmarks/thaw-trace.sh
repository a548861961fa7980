#!/usr/bin/env bash
# Where one thaw's time goes (Benchmarks/README.md, "Where one thaw's time goes"): runs
# `DaemonBench frozen --rounds 30` against a release notifybusd, traces the benchmark, notifybusd,
# dbus-daemon and the subscribers with `perf trace -T` (Debian's linux-perf) for 12 s, and prints
# per thaw of the daemon subscriber the times from the write of 0 to `cgroup.freeze` to each step
# (Benchmarks/thaw-trace.py; also Benchmarks/results/thaw-trace.md). Needs root and a cgroup2
# mount, as `frozen` does. Each traced system call costs tens of µs more, so the sums are about
# twice the untraced thaw.
#   Benchmarks/thaw-trace.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source Benchmarks/common.sh
command -v perf >/dev/null || { echo "thaw-trace.sh: perf is not installed (apt-get install linux-perf)" >&2; exit 1; }
bench_build "notifybusd (release)" swift build -c release --product notifybusd
bench_product DaemonBench
notifybusd="$(swift build -c release --show-bin-path)/notifybusd"
bench="$bench_bin/DaemonBench"
bench_run_note "$(perf --version 2>/dev/null)"
work="$(mktemp -d)"
trap 'rm -rf "$work" "$bench_log"' EXIT
# The traced run's own tables are not the untraced run's: they stay out of Benchmarks/results.
NOTIFYBUS_BENCH_RESULTS= "$bench" frozen --notifybusd "$notifybusd" --rounds 30 > "$work/frozen.txt" 2>&1 &
bench_pid=$!
sleep 1.5
pids="$(echo "$bench_pid" $(pgrep -P "$bench_pid") | tr ' ' ',')"
timeout 12 perf trace -T -p "$pids" -o "$work/trace" 2>/dev/null || true
wait "$bench_pid" || { cat "$work/frozen.txt" >&2; exit 1; }
python3 Benchmarks/thaw-trace.py "$work/trace" | results_file thaw-trace
