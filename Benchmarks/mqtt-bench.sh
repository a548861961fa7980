#!/usr/bin/env bash
# The MQTT link side by side with its anchor, a plain libmosquitto publisher that sends every
# event (what `mosquitto_pub` per event sends), against a real Mosquitto broker of its own
# (Benchmarks/Processes, MQTTBench):
#   outage   10 keys × 1,000 changes while the broker is down: messages after the reconnection,
#            and the time from reconnection until the broker holds every current value
#   latency  a change → a subscriber of the broker (p50, p99)
#   hosts    100 simulated hosts × 10 keys on one broker: start-up and a broker restart
#   fleet    100 simulated hosts × 10 keys × 1,000 changes each, `notifywatch --mqtt --json`
#            (the release binary, built here if missing) watching: the time until it shows every
#            (host, key)'s last value, and the broker's messages
#   idle     a connected link with nothing to send: its loop thread's wake-ups
#
#   Benchmarks/mqtt-bench.sh              # all five; Markdown on stdout and in Benchmarks/results/mqtt-*.md
#   Benchmarks/mqtt-bench.sh outage idle  # some of them
#
# Needs mosquitto and libmosquitto-dev (scripts/bootstrap installs them). About 2 minutes after
# the first build, plus 1 to 2 minutes for fleet.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source Benchmarks/common.sh
bench_product MQTTBench
bench="$bench_bin/MQTTBench"
if [[ $# -eq 0 || " $* " == *" fleet "* ]]; then
    export NOTIFYWATCH="${NOTIFYWATCH:-$PWD/.build/release/notifywatch}"
    if [[ ! -x "$NOTIFYWATCH" ]]; then bench_build "notifywatch (release)" swift build -c release --product notifywatch; fi
fi
bench_run_note "mosquitto $(dpkg-query -W -f='${Version}' mosquitto 2>/dev/null || echo unknown)"
"$bench" "$@"
