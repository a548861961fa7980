#!/usr/bin/env bash
# notifybusd's app lifecycle (`--freeze-background`, FreezingBackgroundApps.md) side by side with
# its anchors, in one run (Benchmarks/Processes, LifecycleBench). `sway`: parts 1 to 5, against a
# headless sway (as nobody) with foot windows in app scopes of a private cgroup tree and
# `notifybusd --freeze-background --toplevels sway --freeze-delay 2` on a private session bus:
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
# `phoc`: part 6, focus → thawed as part 1 on a headless phoc 0.24 (`--toplevels wlr`, apps
#   activated by the tests' Wayland client as Phosh's overview does), against
#   `WaylandTestClient --freeze-on-activate APP_ID CGROUP_DIR`, a bare C client of the same protocol
#   that writes `cgroup.freeze` itself; LIFECYCLE_ROUNDS rounds each
# `made`: part 7, with a real systemd user manager and notifybusd on its bus (`app-units = make`):
#   a window opened in no app unit → its process in the scope notifybusd made for it, over
#   LIFECYCLE_MADE_APPS windows (default 20), against the benchmark's own StartTransientUnit
#
#   Benchmarks/lifecycle-bench.sh                # all three; Markdown on stdout and in
#                                                # Benchmarks/results/lifecycle-*.md, progress on stderr
#   Benchmarks/lifecycle-bench.sh phoc made      # some of them
#   LIFECYCLE_ROUNDS=50 LIFECYCLE_FLUSH_ROUNDS=5 LIFECYCLE_WAKE_ROUNDS=30 LIFECYCLE_BUSY_SECONDS=60 LIFECYCLE_IDLE_SECONDS=60 Benchmarks/lifecycle-bench.sh
#
# Needs root, a cgroup2 mount, sway, foot, dbus-daemon and libdbus-1-dev; phoc for `phoc`;
# systemd and dbus-user-session for `made`. About 9 minutes after the first build. Exits non-zero
# when something could not be measured, not on a missed goal. Whatever happens, the trap thaws and
# kills everything in the run's cgroup trees and removes them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source Benchmarks/common.sh
[ "$(id -u)" -eq 0 ] || { echo "lifecycle-bench.sh: needs root (cgroups, sway as nobody)" >&2; exit 1; }
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(sway phoc made)
needed=(sway foot dbus-daemon setpriv)
for part in "${parts[@]}"; do
    case "$part" in
        sway) ;;
        phoc) needed+=(phoc) ;;
        made) needed+=(systemd-run systemctl) ;;
        *) echo "lifecycle-bench.sh: no part $part (sway, phoc, made)" >&2; exit 64 ;;
    esac
done
for program in "${needed[@]}"; do
    command -v "$program" >/dev/null || { echo "lifecycle-bench.sh: $program is not installed" >&2; exit 1; }
done
mount_point="$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)"
[ -n "$mount_point" ] || { echo "lifecycle-bench.sh: no cgroup2 mount" >&2; exit 1; }

work="$(mktemp -d /tmp/nb-lifebench.XXXXXX)"
chmod 711 "$work"
tree_name="nb-lifebench-$$"
bench_pid=""
ran_pids=()
# remove_tree DIR: thaws every group, kills whatever is left in the tree, removes it deepest first.
remove_tree() {
    [ -d "$1" ] || return 0
    find "$1" -depth -type d -exec sh -c 'echo 0 > "$1/cgroup.freeze"' sh {} \; 2>/dev/null || true
    echo 1 > "$1/cgroup.kill" 2>/dev/null || true
    for _ in $(seq 100); do
        find "$1" -depth -type d -exec rmdir {} \; 2>/dev/null || true
        [ -d "$1" ] || break
        sleep 0.1
    done
    [ ! -d "$1" ] || echo "lifecycle-bench.sh: could not remove $1" >&2
}
cleanup() {
    if [ -n "$bench_pid" ]; then kill -TERM "$bench_pid" 2>/dev/null || true; wait "$bench_pid" 2>/dev/null || true; fi
    for tree in "$mount_point/$tree_name" "$mount_point/$tree_name-phoc" "$mount_point/$tree_name-made"; do remove_tree "$tree"; done
    # A user manager's tree (Packages/Harness, SystemdUserManager) left by a LifecycleBench that was killed.
    for pid in "${ran_pids[@]}"; do
        for tree in "$mount_point"/nb-systemd-"$pid"-*; do remove_tree "$tree"; done
    done
    rm -rf "$work" "$bench_log"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

bench_build "notifybusd (release)" swift build -c release --product notifybusd
bench_build "WaylandTestClient (release)" swift build -c release --product WaylandTestClient
bench_product LifecycleBench FocusThaw
root_bin="$(swift build -c release --show-bin-path)"
bin="$bench_bin"
bench_run_note "sway $(sway --version 2>/dev/null | awk '{ print $3 }'); foot $(foot --version 2>/dev/null | awk '{ print $3 }')$(
    command -v phoc >/dev/null && printf '; phoc %s' "$(dpkg-query -W -f='${Version}' phoc 2>/dev/null)")$(
    command -v systemctl >/dev/null && printf '; systemd %s' "$(systemctl --version | awk 'NR == 1 { print $2 }')")"

# run MODE ARGS...: one LifecycleBench run in the background (so that the trap can end it).
run() {
    "$bin/LifecycleBench" "$@" --notifybusd "$root_bin/notifybusd" --work "$work" &
    bench_pid=$!
    ran_pids+=("$bench_pid")
    local status=0
    wait "$bench_pid" || status=$?
    bench_pid=""
    [ "$status" -eq 0 ] || { echo "lifecycle-bench.sh: LifecycleBench $1 failed ($status)" >&2; exit "$status"; }
}
for part in "${parts[@]}"; do
    case "$part" in
        sway)
            run run --focus-thaw "$bin/FocusThaw" --tree "$tree_name" \
                --rounds "${LIFECYCLE_ROUNDS:-50}" --flush-rounds "${LIFECYCLE_FLUSH_ROUNDS:-5}" \
                --wake-rounds "${LIFECYCLE_WAKE_ROUNDS:-30}" --busy-seconds "${LIFECYCLE_BUSY_SECONDS:-60}" \
                --idle-seconds "${LIFECYCLE_IDLE_SECONDS:-60}" ;;
        phoc) run phoc --test-client "$root_bin/WaylandTestClient" --tree "$tree_name-phoc" --rounds "${LIFECYCLE_ROUNDS:-50}" ;;
        made) run made --tree "$tree_name-made" --apps "${LIFECYCLE_MADE_APPS:-20}" ;;
    esac
done
