import BenchSupport
import Harness
#if canImport(Glibc)
import Glibc
#endif

/// `DaemonBench latency`: one `SettingChanged` at a time from the portal, each carrying its send
/// time (CLOCK_MONOTONIC), received by a subscriber process through notifybusd (source → the
/// daemon's bus → a unicast `Events` signal) and by a raw libdbus subscriber with a match rule on
/// the same signal. Blocks of `block` signals alternate: the raw subscriber's rule takes namespace
/// `bench.raw` and the daemon subscriber's pattern `settings/bench/**`, so each signal is received
/// by one of them and neither waits behind the other (the CPU time of notifybusd, dbus-daemon and
/// the subscriber is summed over each side's blocks); with `--together` both get every signal (namespace
/// `bench`), as two apps on one desktop would. The next signal leaves once the last was received.
/// `--samples FILE` keeps every sample.
struct LatencyBenchmark {
    let notifybusd: String
    let executable: String
    let signals: Int
    let warmup: Int
    let together: Bool
    let block: Int
    /// Where to write every sample (`side round send-time latency`, nanoseconds), if anywhere.
    let samples: String?

    init(arguments: Arguments, executable: String) {
        notifybusd = arguments.string("notifybusd", default: "notifybusd")
        self.executable = executable
        signals = arguments.integer("signals", default: 2000)
        warmup = arguments.integer("warmup", default: 200)
        together = arguments.flag("together")
        block = max(1, arguments.integer("block", default: 10))
        samples = arguments.optional("samples")
    }

    private func cpuNow(_ testbed: BenchBed, _ subscriber: ChildProcess) -> [Int64] {
        [ProcessStats.cpuNanoseconds(of: testbed.notifybusdPID), ProcessStats.cpuNanoseconds(of: testbed.busDaemonPID),
         ProcessStats.cpuNanoseconds(of: subscriber.pid)]
    }

    func run() throws {
        let testbed = try BenchBed(settings: ["bench": ["ping": 0], "bench.raw": ["ping": 0]])
        defer { testbed.stop() }
        try testbed.startDaemon(notifybusd)
        let rawNamespace = together ? "bench" : "bench.raw"
        let children = [
            try testbed.subscriber(executable, kind: .raw, name: "raw-subscriber", ["--report", "each", "--namespace", rawNamespace]).child,
            try testbed.subscriber(executable, kind: .daemon, name: "daemon-subscriber", ["--report", "each", "--namespace", "bench"]).child,
        ]
        usleep(200_000)
        var latencies: [[Int64]] = [[], []]
        var lines: [String] = []
        // CPU nanoseconds of each side's measured blocks: notifybusd, dbus-daemon, the subscriber.
        var cpu: [[Int64]] = [[0, 0, 0], [0, 0, 0]]
        var seen = [0, 0]
        let perSide = (warmup + signals + block - 1) / block
        for blockIndex in 0..<(together ? perSide : 2 * perSide) {
            let sides = together ? [0, 1] : [blockIndex % 2]
            let measured = seen[sides[0]] >= warmup
            let before = cpuNow(testbed, children[sides[0]])
            for _ in 0..<block {
                let sent = monotonicNanoseconds()
                testbed.portal.change(namespace: sides == [0] ? rawNamespace : "bench", key: "ping", value: sent)
                testbed.portal.flush()
                for side in sides {
                    guard let line = children[side].readLine(timeout: .seconds(10)) else {
                        throw HarnessError("signal \(sent) was not received by the \(side == 0 ? "raw" : "daemon") subscriber")
                    }
                    let words = line.split(separator: " ").compactMap { Int64($0) }
                    guard words.count == 2, words[0] == sent else { throw HarnessError("unexpected line \(line) for \(sent)") }
                    if seen[side] >= warmup {
                        latencies[side].append(words[1] - sent)
                        lines.append("\(side == 0 ? "raw" : "daemon") \(seen[side] - warmup) \(sent) \(words[1] - sent)")
                    }
                    seen[side] += 1
                }
            }
            usleep(1_000)  // the block's last messages are read everywhere before its CPU time is read
            if measured, !together {
                cpu[sides[0]] = zip(cpu[sides[0]], zip(cpuNow(testbed, children[sides[0]]), before)).map { $0 + $1.0 - $1.1 }
            }
            testbed.portal.serve()
        }
        children.forEach { $0.terminate() }
        if let samples, let file = fopen(samples, "w") {
            for line in lines { fputs(line + "\n", file) }
            fclose(file)
        }

        var report = ReportPart(together ? "daemon-latency-together" : "daemon-latency")
        let mode = together ? "both subscribers receive every signal" : "alternate blocks of \(block), one subscriber each"
        report.line("Live latency: a portal `SettingChanged` → the subscriber has its value, \(signals) signals each (\(mode); after \(warmup) of warm-up)")
        report.line()
        report.line("| subscriber | p50 | p90 | p99 |")
        report.line("|---|---:|---:|---:|")
        for (name, values) in [("raw D-Bus match rule on `SettingChanged` (anchor)", latencies[0]), ("through notifybusd (`Events`)", latencies[1])] {
            report.line("| \(name) | \(Figure.microseconds(Samples(values).percentile(0.5))) | \(Figure.microseconds(Samples(values).percentile(0.9))) | \(Figure.microseconds(Samples(values).percentile(0.99))) |")
        }
        report.line()
        if !together {
            for (side, name) in [(0, "raw"), (1, "through notifybusd")] {
                let count = Int64(max(1, latencies[side].count))
                report.line("CPU per signal, \(name): notifybusd \(Figure.microseconds(cpu[side][0] / count)), dbus-daemon \(Figure.microseconds(cpu[side][1] / count)), "
                    + "the subscriber \(Figure.microseconds(cpu[side][2] / count)).")
            }
        }
        let p50 = (Samples(latencies[1]).percentile(0.5), Samples(latencies[0]).percentile(0.5))
        let p99 = (Samples(latencies[1]).percentile(0.99), Samples(latencies[0]).percentile(0.99))
        report.line("notifybusd / raw: p50 \(Figure.ratio(p50.0, p50.1)), p99 \(Figure.ratio(p99.0, p99.1)) (target ≤ 2.2×): "
            + "\(p50.0 * 10 <= p50.1 * 22 ? "met" : "missed") at p50, \(p99.0 * 10 <= p99.1 * 22 ? "met" : "missed") at p99.")
        try report.finish()
    }
}
