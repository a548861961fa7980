#!/usr/bin/env bash
# The MQTT link side by side with its anchor, a plain libmosquitto publisher that sends every
# event (what `mosquitto_pub` per event sends), against a real Mosquitto broker of its own
# (Benchmarks/MQTTBench):
#   outage   10 keys × 1,000 changes while the broker is down: messages after the reconnection,
#            and the time from reconnection until the broker holds every current value
#   latency  a change → a subscriber of the broker (p50, p99)
#   hosts    100 simulated hosts × 10 keys on one broker: start-up and a broker restart
#   fleet    100 simulated hosts × 10 keys × 1,000 changes each, `notifywatch --mqtt --json`
#            (the release binary, built here if missing) watching: the time until it shows every
#            (host, key)'s last value, and the broker's messages
#   idle     a connected link with nothing to send: its loop thread's wake-ups
#
#   Benchmarks/mqtt-bench.sh              # all five; Markdown on stdout
#   Benchmarks/mqtt-bench.sh outage idle  # some of them
#
# Needs mosquitto and libmosquitto-dev (scripts/bootstrap installs them). About 2 minutes after
# the first build, plus 1 to 2 minutes for fleet.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
echo "mqtt-bench.sh: building MQTTBench (release)" >&2
swift build -c release --package-path Benchmarks/MQTTBench >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
bench="$(swift build -c release --package-path Benchmarks/MQTTBench --show-bin-path)/MQTTBench"
if [[ $# -eq 0 || " $* " == *" fleet "* ]]; then
    export NOTIFYWATCH="${NOTIFYWATCH:-$PWD/.build/release/notifywatch}"
    if [[ ! -x "$NOTIFYWATCH" ]]; then
        echo "mqtt-bench.sh: building notifywatch (release)" >&2
        swift build -c release --product notifywatch >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
    fi
fi
load_at_start="$(cut -d' ' -f1-3 /proc/loadavg)"
"$bench" "$@"
printf '%s; %s vCPUs (%s); mosquitto %s; load average %s at the start, %s at the end; produced by `Benchmarks/mqtt-bench.sh`.\n' \
    "$(swift --version 2>/dev/null | head -1 | sed 's/ (.*//')" "$(nproc)" \
    "$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo unknown CPU)" \
    "$(dpkg-query -W -f='${Version}' mosquitto 2>/dev/null || echo unknown)" "$load_at_start" "$(cut -d' ' -f1-3 /proc/loadavg)"
