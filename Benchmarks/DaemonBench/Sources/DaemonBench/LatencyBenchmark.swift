#if canImport(Glibc)
import Glibc
#endif

/// `DaemonBench latency`: one `SettingChanged` at a time from the portal, each carrying its send
/// time (CLOCK_MONOTONIC), received by a subscriber process through notifybusd (source → the
/// daemon's bus → a unicast `Events` signal) and by a raw libdbus subscriber with a match rule on
/// the same signal. Rounds alternate: the raw subscriber's rule takes namespace `bench.raw` and
/// the daemon subscriber's pattern `settings/bench/**`, so each round is received by one of them
/// and neither waits behind the other; with `--together` both get every signal (namespace
/// `bench`), as two apps on one desktop would. The next signal leaves once the last was received.
struct LatencyBenchmark {
    let notifybusd: String
    let executable: String
    let signals: Int
    let warmup: Int
    let together: Bool

    init(arguments: Arguments, executable: String) {
        notifybusd = arguments.string("notifybusd", default: "notifybusd")
        self.executable = executable
        signals = arguments.integer("signals", default: 2000)
        warmup = arguments.integer("warmup", default: 200)
        together = arguments.flag("together")
    }

    func run() throws(BenchError) {
        let testbed = try Testbed(notifybusd: notifybusd, settings: ["bench": ["ping": 0], "bench.raw": ["ping": 0]])
        defer { testbed.stop() }
        let rawNamespace = together ? "bench" : "bench.raw"
        let children = [
            try testbed.subscriber(executable, kind: .raw, name: "raw-subscriber", ["--report", "each", "--namespace", rawNamespace]),
            try testbed.subscriber(executable, kind: .daemon, name: "daemon-subscriber", ["--report", "each", "--namespace", "bench"]),
        ]
        usleep(200_000)
        var latencies: [[Int64]] = [[], []]
        let rounds = together ? warmup + signals : 2 * (warmup + signals)
        for round in 0..<rounds {
            let sides = together ? [0, 1] : [round % 2]
            let sent = monotonicNanoseconds()
            testbed.portal.change(namespace: sides == [0] ? rawNamespace : "bench", key: "ping", value: sent)
            testbed.portal.flush()
            for side in sides {
                guard let line = children[side].readLine(timeoutMilliseconds: 10_000) else {
                    throw BenchError("signal \(round) was not received by the \(side == 0 ? "raw" : "daemon") subscriber")
                }
                let words = line.split(separator: " ").compactMap { Int64($0) }
                guard words.count == 2, words[0] == sent else { throw BenchError("unexpected line \(line) for \(sent)") }
                if (together ? round : round / 2) >= warmup { latencies[side].append(words[1] - sent) }
            }
            testbed.portal.serve()
        }
        children.forEach { $0.terminate() }

        let mode = together ? "both subscribers receive every signal" : "alternate signals, one subscriber each"
        print("Live latency: a portal `SettingChanged` → the subscriber has its value, \(signals) signals each (\(mode); after \(warmup) of warm-up)")
        print("")
        print("| subscriber | p50 | p90 | p99 |")
        print("|---|---:|---:|---:|")
        for (name, values) in [("raw D-Bus match rule on `SettingChanged` (anchor)", latencies[0]), ("through notifybusd (`Events`)", latencies[1])] {
            print("| \(name) | \(Stats.micro(Stats.percentile(values, 0.5))) | \(Stats.micro(Stats.percentile(values, 0.9))) | \(Stats.micro(Stats.percentile(values, 0.99))) |")
        }
        print("")
        let p50 = (Stats.percentile(latencies[1], 0.5), Stats.percentile(latencies[0], 0.5))
        let p99 = (Stats.percentile(latencies[1], 0.99), Stats.percentile(latencies[0], 0.99))
        print("notifybusd / raw: p50 \(Stats.ratio(p50.0, p50.1)), p99 \(Stats.ratio(p99.0, p99.1)) (target ≤ 2.2×): "
            + "\(p50.0 * 10 <= p50.1 * 22 ? "met" : "missed") at p50, \(p99.0 * 10 <= p99.1 * 22 ? "met" : "missed") at p99.")
    }
}
