# Sourced by the commands in Benchmarks/: where their tables go, the words that say which run they
# are, and a build whose output shows only when it fails.
#
# Each part of a command's report is printed and written to Benchmarks/results/<part>.md
# (overwritten by each run; Packages/Harness's ReportPart, or results_file below for the C and shell
# ones), its last line saying when, on what, and by which command. NOTIFYBUS_BENCH_RESULTS names
# another directory; set to nothing, the tables are only printed.

bench_name="$(basename "$0")"
bench_command="${bench_command:-Benchmarks/$bench_name${*:+ $*}}"
export NOTIFYBUS_BENCH_RESULTS="${NOTIFYBUS_BENCH_RESULTS-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/results}"
[ -z "$NOTIFYBUS_BENCH_RESULTS" ] || mkdir -p "$NOTIFYBUS_BENCH_RESULTS"
bench_log="$(mktemp)"
bench_load_at_start="$(cut -d' ' -f1-3 /proc/loadavg)"
trap 'rm -f "$bench_log"' EXIT

# bench_build WHAT COMMAND...: runs a build (progress on standard error, its output only on failure).
bench_build() {
    local what="$1"; shift
    echo "$bench_name: building $what" >&2
    "$@" >"$bench_log" 2>&1 || { cat "$bench_log" >&2; exit 1; }
}

# bench_product NAME...: builds the products NAME of Benchmarks/Processes (release), and sets
# bench_bin to the directory they are in.
bench_product() {
    local product
    for product in "$@"; do
        bench_build "$product (release)" swift build -c release --package-path Benchmarks/Processes --product "$product"
    done
    bench_bin="$(swift build -c release --package-path Benchmarks/Processes --show-bin-path)"
}

# bench_run_note PEERS...: exports NOTIFYBUS_BENCH_RUN, the run's words in each part's last line:
# the toolchain, the machine, PEERS (the programs measured against and their versions), the command.
bench_run_note() {
    local peers="${*:+; $*}"
    NOTIFYBUS_BENCH_RUN="$(swift --version 2>/dev/null | head -1 | sed 's/ (.*//'); $(nproc) vCPUs ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo unknown CPU))$peers; produced by \`$bench_command\`"
    export NOTIFYBUS_BENCH_RUN
}

# results_file NAME: copies standard input to standard output and, with its run's last line, to
# the results directory's NAME.md (for the parts that ReportPart does not write).
results_file() {
    local text
    text="$(cat)"
    printf '%s\n\n' "$text"
    [ -n "$NOTIFYBUS_BENCH_RESULTS" ] || return 0
    printf '%s\n\nMeasured %s: %s; load average %s as the run began, %s when this part was written.\n' \
        "$text" "$(date -u '+%Y-%m-%d %H:%M UTC')" "${NOTIFYBUS_BENCH_RUN:-a run by hand}" "$bench_load_at_start" \
        "$(cut -d' ' -f1-3 /proc/loadavg)" > "$NOTIFYBUS_BENCH_RESULTS/$1.md"
}
