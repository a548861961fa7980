#!/usr/bin/env bash
# Runs every NotifyBus benchmark (release build) and prints a Markdown table of ratios, ours / anchor,
# with the absolute medians beside them. Each benchmark runs side by side with its anchor, in the same
# process, one after the other (Benchmarks/README.md, "Targets").
#
#   Benchmarks/report.sh            # the table on stdout and in Benchmarks/results/in-process.md, progress on stderr
#   Benchmarks/report.sh --raw DIR  # also keep the benchmark's JMH export (JSON) in DIR
#
# It needs jq (installed with apt-get when missing and run as root). No libjemalloc is needed: the
# benchmark package's MallocInterposer trait counts mallocs without jemalloc. A full run takes ~3-4
# minutes on 2 cores, most of it the first build.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/common.sh"
raw=""
if [[ "${1:-}" == "--raw" ]]; then raw="${2:?--raw needs a directory}"; fi

if ! command -v jq >/dev/null; then
    if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
        echo "report.sh: installing jq" >&2
        apt-get install -y -qq jq >/dev/null || { apt-get update -qq && apt-get install -y -qq jq >/dev/null; }
    else
        echo "report.sh: needs jq (sudo apt-get install jq)" >&2
        exit 1
    fi
fi

out="$(mktemp -d)"
trap 'rm -rf "$out" "$bench_log"' EXIT
cd "$here"

echo "report.sh: building the benchmarks (release)" >&2
swift build -c release >"$out/build.log" 2>&1 || { cat "$out/build.log" >&2; exit 1; }
echo "report.sh: running the benchmarks" >&2
swift package --allow-writing-to-directory "$out" benchmark \
    --skip-target Profile --skip-target ClockCost --skip-target Allocations --no-progress --format jmh --path "$out" >"$out/run.log" 2>&1 || { cat "$out/run.log" >&2; exit 1; }
json="$out/Current_run.jmh.json"
[[ -s "$json" ]] || { echo "report.sh: no results in $json" >&2; cat "$out/run.log" >&2; exit 1; }
if [[ -n "$raw" ]]; then mkdir -p "$raw" && cp "$json" "$raw/"; fi

# median TARGET NAME METRIC: the p50 of one metric of one benchmark. The JMH export gives time in µs
# for the whole sample and counts as they are.
median() {
    local id="package.benchmark.$1.${2// /_}"
    jq -r --arg id "$id" --arg m "$3" '
        [.[] | select(.benchmark == $id) | .secondaryMetrics[$m].scorePercentiles["50.0"]] | first // empty
    ' "$json"
}

# The rows: what | target | suite | ours | anchor | ns per op = µs per sample × this | unit | limit.
# Most samples are 1000 operations, so µs per sample is ns per operation; a flush sample is 10,000 keys.
# limit: the largest ratio ours / anchor that meets the target ("" when there is none).
time_rows=(
    "publish to a suspended subscriber (100 keys) vs Mutex<[String: Int]> upsert|≤ 1.5×|SuspendedPublish|publish suspended by key (ours)|publish suspended by key (anchor: Mutex<[String: Int]> upsert)|1|ns|1.5"
    "publish by pre-resolved handle, suspended subscriber vs Mutex lock/unlock|≤ 2.5×|SuspendedPublish|publish suspended by handle (ours)|publish suspended by handle (anchor: Mutex lock/unlock)|1|ns|2.5"
    "(analysis) publish by key in batches of 4 (publish(_:at:): one clock read and one lock per batch), per key, vs Mutex<[String: Int]> upsert|–|SuspendedPublish|publish suspended by key, batches of 4 (ours, per key)|publish suspended by key (anchor: Mutex<[String: Int]> upsert)|1|ns|"
    "(analysis) publish by handle with the time given (at:, no clock read) vs Mutex lock/unlock|–|SuspendedPublish|publish suspended by handle, time given (ours, no clock read)|publish suspended by handle (anchor: Mutex lock/unlock)|1|ns|"
    "(analysis) the clock read every publish pays, BusClock.continuous().now(), vs Mutex lock/unlock|–|SuspendedPublish|clock read (BusClock.continuous().now())|publish suspended by handle (anchor: Mutex lock/unlock)|1|ns|"
    "publish, 1 active subscriber (drained every 64) vs NotificationCenter.post, 1 observer|≤ 0.33× (3× faster)|ActivePublish|publish active (ours, poll every 64)|publish active (anchor: NotificationCenter.post, 1 observer, no userInfo)|1|ns|0.3333"
    "the same vs NotificationCenter.post with the value in userInfo|–|ActivePublish|publish active (ours, poll every 64)|publish active (anchor: NotificationCenter.post, 1 observer)|1|ns|"
    "the same vs AsyncStream.yield (drained every 64)|–|ActivePublish|publish active (ours, poll every 64)|publish active (anchor: AsyncStream.yield, next() every 64)|1|ns|"
    "delivery latency to a waiting task, ping-pong round trip vs AsyncStream|≤ 1.5×|Latency|ping-pong round trip (ours, subscription AsyncSequence)|ping-pong round trip (anchor: AsyncStream)|1|ns|1.5"
    "flush on resume, 100 keys, per key (average, fixed cost included) vs swap and walk [Int: Int]|–|Flush|flush 100 keys (ours, resume + poll)|flush 100 keys (anchor: swap and walk [Int: Int])|0.1|ns/key|"
    "flush on resume, 1000 keys, per key (average, fixed cost included) vs swap and walk [Int: Int]|–|Flush|flush 1000 keys (ours, resume + poll)|flush 1000 keys (anchor: swap and walk [Int: Int])|0.1|ns/key|"
    "fan-out: publish to 100 suspended subscribers vs 100 Mutex<[String: Int]> upserts|–|FanOut|fan-out to 100 suspended (ours)|fan-out to 100 (anchor: 100 Mutex<[String: Int]> upserts)|1|ns|"
    "fan-out: publish to 100 active subscribers (drained every 64) vs 100 upserts|–|FanOut|fan-out to 100 active (ours, poll every 64)|fan-out to 100 (anchor: 100 Mutex<[String: Int]> upserts)|1|ns|"
)

verdict() { # ratio limit -> met/missed/–
    if [[ -z "$2" ]]; then echo "–"; return; fi
    awk -v r="$1" -v l="$2" 'BEGIN { print (r <= l + 1e-9) ? "met" : "**missed**" }'
}

# The table, for results_file.
table() {
printf '| benchmark | ours (median) | anchor (median) | ours / anchor | target | |\n'
printf '|---|---:|---:|---:|---|---|\n'
for row in "${time_rows[@]}"; do
    IFS='|' read -r what target suite ours anchor scale unit limit <<<"$row"
    a="$(median "$suite" "$ours" "Time (wall clock)")"
    b="$(median "$suite" "$anchor" "Time (wall clock)")"
    if [[ -z "$a" || -z "$b" ]]; then
        printf '| %s | n/a | n/a | n/a | %s | not run |\n' "$what" "$target"
        continue
    fi
    read -r oa ob ratio < <(awk -v a="$a" -v b="$b" -v s="$scale" 'BEGIN { printf "%.1f %.1f %.2f\n", a * s, b * s, a / b }')
    v="$(verdict "$ratio" "$limit")"
    printf '| %s | %s %s | %s %s | %s× | %s | %s |\n' "$what" "$oa" "$unit" "$ob" "$unit" "$ratio" "$target" "$v"
done

# Flush: the marginal cost per key is the slope between the 100-key and the 1000-key flushes (each
# sample flushes 10,000 keys: 100 flushes of 100, or 10 of 1000); the intercept is the fixed cost of
# one resume and poll. "≤ 20 ns per key plus one wake-up" is a bound on the slope.
f100="$(median Flush "flush 100 keys (ours, resume + poll)" "Time (wall clock)")"
f1000="$(median Flush "flush 1000 keys (ours, resume + poll)" "Time (wall clock)")"
a100="$(median Flush "flush 100 keys (anchor: swap and walk [Int: Int])" "Time (wall clock)")"
a1000="$(median Flush "flush 1000 keys (anchor: swap and walk [Int: Int])" "Time (wall clock)")"
if [[ -n "$f100" && -n "$f1000" && -n "$a100" && -n "$a1000" ]]; then
    read -r slope fixed aslope ratio < <(awk -v f1="$f100" -v f2="$f1000" -v a1="$a100" -v a2="$a1000" 'BEGIN {
        s = (f2 * 1000 / 10 - f1 * 1000 / 100) / 900; i = f1 * 1000 / 100 - 100 * s
        as = (a2 * 1000 / 10 - a1 * 1000 / 100) / 900
        printf "%.1f %.0f %.1f %.2f\n", s, i, as, (as > 0) ? s / as : 0 }')
    printf '| flush on resume, marginal cost per key (slope 100 → 1000 keys); fixed cost per resume + poll: %s ns | %s ns/key | %s ns/key | %s× | ≤ 20 ns/key | %s |\n' \
        "$fixed" "$slope" "$aslope" "$ratio" "$(awk -v x="$slope" 'BEGIN { print (x <= 20) ? "met" : "**missed**" }')"
fi

# Memory of a suspended subscriber: the 10M-event run against the 1M-event run (flat means 1.00×).
m() { median Memory "suspended subscriber, $1 events over 100 keys ($2)" "$3"; }
mem_row() { # label metric kind unit
    local a b ratio
    a="$(m 10M "$3" "$2")"
    b="$(m 1M "$3" "$2")"
    if [[ -z "$a" || -z "$b" ]]; then
        printf '| %s | n/a | n/a | n/a | flat | not run |\n' "$1"
        return
    fi
    ratio="$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", (b == 0) ? (a == 0 ? 1 : 99) : a / b }')"
    printf '| %s | %s %s at 10M | %s %s at 1M | %s× | flat (1.00×) | %s |\n' \
        "$1" "$(awk -v x="$a" -v d="$5" 'BEGIN { printf "%.0f", x / d }')" "$4" \
        "$(awk -v x="$b" -v d="$5" 'BEGIN { printf "%.0f", x / d }')" "$4" \
        "$ratio" "$(verdict "$ratio" 1.02)"
}
mem_row "memory of a suspended subscriber, 10M vs 1M events over 100 keys: mallocs during the run" "Malloc (total)" malloc "mallocs" 1
mem_row "the same: bytes malloc'd during the run" "Malloc (bytes total)" malloc "bytes" 1
mem_row "the same: allocations still live at the end (malloc − free)" "Malloc / free Δ" malloc "allocations" 1
mem_row "the same: peak resident memory of the process" "Memory (resident peak)" resident "MB" 1048576

}
bench_run_note "medians of each benchmark's samples"
table | results_file in-process
