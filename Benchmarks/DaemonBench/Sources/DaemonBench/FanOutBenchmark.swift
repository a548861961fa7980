#if canImport(Glibc)
import Glibc
#endif

/// `DaemonBench fanout`: one change reaching `connections` client connections, until the last
/// of them has decoded it: through notifybusd (one subscription per connection, the daemon sends
/// one unicast `Events` per subscription) against dbus-daemon broadcasting the portal's
/// `SettingChanged` to as many match rules. Each side's connections are spread over `processes`
/// subscriber processes (one thread each, `poll` over its connections). Rounds alternate between
/// the sides in blocks of `block` changes (namespaces `bench` and `bench.raw`); the next change
/// leaves once the last connection had the previous one. The CPU time of notifybusd, dbus-daemon
/// and the subscribers is summed over each side's blocks (all their threads' `schedstat`).
struct FanOutBenchmark {
    let notifybusd: String
    let executable: String
    let connections: Int
    let processes: Int
    let rounds: Int
    let warmup: Int
    let block: Int

    init(arguments: Arguments, executable: String) {
        notifybusd = arguments.string("notifybusd", default: "notifybusd")
        self.executable = executable
        connections = arguments.integer("connections", default: 100)
        processes = max(1, arguments.integer("processes", default: 4))
        rounds = arguments.integer("rounds", default: 300)
        warmup = arguments.integer("warmup", default: 30)
        block = max(1, arguments.integer("block", default: 10))
    }

    func run() throws(BenchError) {
        let testbed = try Testbed(notifybusd: notifybusd, settings: ["bench": ["ping": 0], "bench.raw": ["ping": 0]])
        defer { testbed.stop() }
        var sides: [[ChildProcess]] = [[], []]
        for (side, kind) in [Subscriber.Kind.raw, .daemon].enumerated() {
            for index in 0..<processes {
                let count = connections / processes + (index < connections % processes ? 1 : 0)
                sides[side].append(try testbed.subscriber(
                    executable, kind: kind, name: "\(kind.rawValue)-fanout-\(index)",
                    ["--report", "fanout", "--connections", "\(count)", "--namespace", side == 0 ? "bench.raw" : "bench"]))
            }
        }
        usleep(300_000)
        var latencies: [[Int64]] = [[], []]
        // CPU nanoseconds of the measured blocks, per side: notifybusd, dbus-daemon, subscribers.
        var cpu: [[Int64]] = [[0, 0, 0], [0, 0, 0]]
        let perSide = (warmup + rounds + block - 1) / block
        let subscriberPIDs = sides.joined().map(\.pid)
        func cpuNow() -> [Int64] {
            [ProcessStats.cpuNanoseconds(of: testbed.notifybusdPID), ProcessStats.cpuNanoseconds(of: testbed.busDaemonPID),
             subscriberPIDs.reduce(0) { $0 + ProcessStats.cpuNanoseconds(of: $1) }]
        }
        for blockIndex in 0..<(2 * perSide) {
            let side = blockIndex % 2
            let measured = (blockIndex / 2) * block >= warmup
            let before = cpuNow()
            for _ in 0..<block {
                let sent = monotonicNanoseconds()
                testbed.portal.change(namespace: side == 0 ? "bench.raw" : "bench", key: "ping", value: sent)
                testbed.portal.flush()
                var last: Int64 = 0
                for child in sides[side] {
                    guard let line = child.readLine(timeoutMilliseconds: 10_000) else {
                        throw BenchError("change \(sent) of block \(blockIndex) did not reach every \(side == 0 ? "raw" : "daemon") connection (process \(child.pid))")
                    }
                    let words = line.split(separator: " ").compactMap { Int64($0) }
                    guard words.count == 2, words[0] == sent else { throw BenchError("unexpected line \(line) for \(sent)") }
                    last = max(last, words[1])
                }
                if measured { latencies[side].append(last - sent) }
            }
            usleep(2_000)  // the last messages of the block are read everywhere before its CPU time is read
            if measured { cpu[side] = zip(cpu[side], zip(cpuNow(), before)).map { $0 + $1.0 - $1.1 } }
            testbed.portal.serve()
        }
        sides.joined().forEach { $0.terminate() }

        print("Fan-out: one change → the last of \(connections) connections has it (\(processes) processes per side, \(latencies[0].count) changes each in alternating blocks of \(block), after \(warmup) of warm-up)")
        print("")
        print("| path | p50 | p90 | p99 |")
        print("|---|---:|---:|---:|")
        for (name, values) in [("dbus-daemon broadcasts `SettingChanged` to \(connections) match rules (anchor)", latencies[0]),
                               ("notifybusd: \(connections) subscriptions, one unicast `Events` each", latencies[1])] {
            print("| \(name) | \(Stats.micro(Stats.percentile(values, 0.5))) | \(Stats.micro(Stats.percentile(values, 0.9))) | \(Stats.micro(Stats.percentile(values, 0.99))) |")
        }
        print("")
        let ours = Stats.percentile(latencies[1], 0.5), anchor = Stats.percentile(latencies[0], 0.5)
        for (side, name) in [(0, "broadcast (anchor)"), (1, "notifybusd")] {
            let count = Int64(max(1, latencies[side].count))
            print("CPU per change, \(name): notifybusd \(Stats.micro(cpu[side][0] / count)), dbus-daemon \(Stats.micro(cpu[side][1] / count)), "
                + "the \(processes) subscriber processes \(Stats.micro(cpu[side][2] / count)).")
        }
        print("notifybusd / broadcast, p50: \(Stats.ratio(ours, anchor)) (target ≤ 1.5×): \(ours * 10 <= anchor * 15 ? "met" : "missed"); "
            + "p99: \(Stats.ratio(Stats.percentile(latencies[1], 0.99), Stats.percentile(latencies[0], 0.99))).")
    }
}
