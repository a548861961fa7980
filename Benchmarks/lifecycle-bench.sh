#!/usr/bin/env bash
# notifybusd's app lifecycle (`--freeze-background`, FreezingBackgroundApps.md) side by side with
# its anchors, in one run (Benchmarks/LifecycleBench), against a headless sway (as nobody) with
# foot windows in app scopes of a private cgroup tree and `notifybusd --freeze-background
# --toplevels sway --freeze-delay 2` on a private session bus:
#   1. focus → the app's cgroup thawed (sway's focus command written → inotify on the scope's
#      cgroup.events, which reads `frozen 0`), p50/p99, against FocusThaw, a bare C program that
#      reads the same sway `window` event and writes `cgroup.freeze` 0 itself; alternating, on the
#      same 5 windows
#   2. focus → the app's subscriber holds every current value, 10 keys × 100 changes made while
#      it was frozen, against the same app kept running (first signal sent → every last value)
#   3. a busy app (foot printing the date every 50 ms, a subscriber getting 10 events a second):
#      CPU time and context switches of its scope over LIFECYCLE_BUSY_SECONDS (default 60),
#      frozen against running, over the same window
#   4. notifybusd idle with the policy on, apps frozen and none woken (the monitor for messages to
#      frozen apps open; LIFECYCLE_IDLE_SECONDS, default 60, after 4 s of settling): context
#      switches per thread; and its RSS against the same daemon without --freeze-background
#   5. woken by a message (`--freeze-wake-grace 1`, LIFECYCLE_WAKE_ROUNDS rounds, default 30): a
#      call to the D-Bus service of an app frozen by the daemon → its reply, against the same call
#      to the same app running just after; a unicast signal to the frozen app → `frozen 0`
#
#   Benchmarks/lifecycle-bench.sh            # Markdown on stdout, progress on stderr
#   LIFECYCLE_ROUNDS=50 LIFECYCLE_FLUSH_ROUNDS=5 LIFECYCLE_WAKE_ROUNDS=30 LIFECYCLE_BUSY_SECONDS=60 LIFECYCLE_IDLE_SECONDS=60 Benchmarks/lifecycle-bench.sh
#
# Needs root, a cgroup2 mount, sway, foot, dbus-daemon and libdbus-1-dev. About 6 minutes after
# the first build. Exits non-zero when something could not be measured, not on a missed goal.
# Whatever happens, the trap thaws and kills everything in the run's cgroup tree and removes it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[ "$(id -u)" -eq 0 ] || { echo "lifecycle-bench.sh: needs root (cgroups, sway as nobody)" >&2; exit 1; }
for program in sway foot dbus-daemon setpriv; do
    command -v "$program" >/dev/null || { echo "lifecycle-bench.sh: $program is not installed" >&2; exit 1; }
done
mount_point="$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)"
[ -n "$mount_point" ] || { echo "lifecycle-bench.sh: no cgroup2 mount" >&2; exit 1; }

log="$(mktemp)"
work="$(mktemp -d /tmp/nb-lifebench.XXXXXX)"
chmod 711 "$work"  # sway and foot run as nobody in a directory under it
tree_name="nb-lifebench-$$"
tree="$mount_point/$tree_name"
bench_pid=""
cleanup() {
    if [ -n "$bench_pid" ]; then kill -TERM "$bench_pid" 2>/dev/null || true; fi
    if [ -d "$tree" ]; then
        # Thaw every group, kill whatever is left in the tree, then remove it deepest first.
        find "$tree" -depth -type d -exec sh -c 'echo 0 > "$1/cgroup.freeze"' sh {} \; 2>/dev/null || true
        echo 1 > "$tree/cgroup.kill" 2>/dev/null || true
        for _ in $(seq 100); do
            find "$tree" -depth -type d -exec rmdir {} \; 2>/dev/null || true
            [ -d "$tree" ] || break
            sleep 0.1
        done
        [ ! -d "$tree" ] || echo "lifecycle-bench.sh: could not remove $tree" >&2
    fi
    rm -rf "$work" "$log"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "lifecycle-bench.sh: building notifybusd and LifecycleBench (release)" >&2
swift build -c release --product notifybusd >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
swift build -c release --package-path Benchmarks/LifecycleBench >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
notifybusd="$(swift build -c release --show-bin-path)/notifybusd"
bin="$(swift build -c release --package-path Benchmarks/LifecycleBench --show-bin-path)"
load_at_start="$(cut -d' ' -f1-3 /proc/loadavg)"

"$bin/LifecycleBench" run --notifybusd "$notifybusd" --focus-thaw "$bin/FocusThaw" --work "$work" --tree "$tree_name" \
    --rounds "${LIFECYCLE_ROUNDS:-50}" --flush-rounds "${LIFECYCLE_FLUSH_ROUNDS:-5}" \
    --wake-rounds "${LIFECYCLE_WAKE_ROUNDS:-30}" --busy-seconds "${LIFECYCLE_BUSY_SECONDS:-60}" --idle-seconds "${LIFECYCLE_IDLE_SECONDS:-60}" &
bench_pid=$!
status=0
wait "$bench_pid" || status=$?
bench_pid=""
[ "$status" -eq 0 ] || { echo "lifecycle-bench.sh: LifecycleBench failed ($status)" >&2; exit "$status"; }
echo
printf '%s; %s vCPUs (%s); %s; %s; load average %s at the start, %s at the end; produced by `Benchmarks/lifecycle-bench.sh`.\n' \
    "$(swift --version 2>/dev/null | head -1 | sed 's/ (.*//')" "$(nproc)" \
    "$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo unknown CPU)" \
    "sway $(sway --version 2>/dev/null | awk '{ print $3 }')" "foot $(foot --version 2>/dev/null | awk '{ print $3 }')" \
    "$load_at_start" "$(cut -d' ' -f1-3 /proc/loadavg)"
