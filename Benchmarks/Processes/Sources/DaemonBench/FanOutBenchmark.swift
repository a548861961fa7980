import BenchSupport
import Harness
#if canImport(Glibc)
import Glibc
#endif

/// `DaemonBench fanout`: one change reaching `connections` client connections, until the last
/// of them has decoded it, three ways:
/// - through notifybusd: one subscription per connection, the daemon's `settings` source gets the
///   portal's `SettingChanged` and sends one unicast `Events` per subscription;
/// - the anchor of the goal: a raw libdbus process (`SignalSender`) with a match rule on the same
///   `SettingChanged` that sends the same unicast `Events` (one element of a live event, one
///   message per connection, each marshalled on its own);
/// - a second anchor: dbus-daemon broadcasting the `SettingChanged` itself to as many match rules.
/// Each side's connections are spread over `processes` subscriber processes (one thread each,
/// `poll` over its connections, decoding every message). Blocks of `block` changes rotate over
/// the sides (namespaces `bench`, `bench.uni`, `bench.raw`); the next change leaves once the last
/// connection had the previous one. The CPU time of notifybusd, the sender, dbus-daemon and the
/// subscribers is summed over each side's blocks (all their threads' `schedstat`).
struct FanOutBenchmark {
    let notifybusd: String
    let executable: String
    let connections: Int
    let processes: Int
    let rounds: Int
    let warmup: Int
    let block: Int

    /// The sides, in the order of the blocks: the kind of their subscribers and their namespace.
    private static let sides: [(kind: Subscriber.Kind, namespace: String)] = [
        (.daemon, "bench"), (.unicast, "bench.uni"), (.raw, "bench.raw"),
    ]

    init(arguments: Arguments, executable: String) {
        notifybusd = arguments.string("notifybusd", default: "notifybusd")
        self.executable = executable
        connections = arguments.integer("connections", default: 100)
        processes = max(1, arguments.integer("processes", default: 4))
        rounds = arguments.integer("rounds", default: 300)
        warmup = arguments.integer("warmup", default: 30)
        block = max(1, arguments.integer("block", default: 10))
    }

    func run() throws {
        let testbed = try BenchBed(settings: Dictionary(uniqueKeysWithValues: Self.sides.map { ($0.namespace, ["ping": Int64(0)]) }))
        defer { testbed.stop() }
        try testbed.startDaemon(notifybusd)
        var children: [[ChildProcess]] = [[], [], []]
        var unicastNames: [String] = []
        for (side, entry) in Self.sides.enumerated() {
            for index in 0..<processes {
                let count = connections / processes + (index < connections % processes ? 1 : 0)
                let (child, names) = try testbed.subscriber(
                    executable, kind: entry.kind, name: "\(entry.kind.rawValue)-fanout-\(index)",
                    ["--report", "fanout", "--connections", "\(count)", "--namespace", entry.namespace])
                children[side].append(child)
                unicastNames += names
            }
        }
        let senderLog = "\(testbed.directory)/sender.log"
        let sender = try ChildProcess.start(
            [executable, "sender", "--address", testbed.address, "--namespace", "bench.uni",
             "--destinations", unicastNames.joined(separator: ",")], standardError: senderLog)
        guard sender.readLine(timeout: .seconds(20), meanwhile: testbed.portal.serve) == "ready" else {
            throw HarnessError("the sender did not start: \(readFile(senderLog) ?? "")")
        }
        usleep(300_000)
        var latencies: [[Int64]] = [[], [], []]
        // CPU nanoseconds of the measured blocks, per side: notifybusd, the sender, dbus-daemon, subscribers.
        var cpu: [[Int64]] = Array(repeating: [0, 0, 0, 0], count: 3)
        let perSide = (warmup + rounds + block - 1) / block
        let subscriberPIDs = children.joined().map(\.pid)
        func cpuNow() -> [Int64] {
            [ProcessStats.cpuNanoseconds(of: testbed.notifybusdPID), ProcessStats.cpuNanoseconds(of: sender.pid),
             ProcessStats.cpuNanoseconds(of: testbed.busDaemonPID),
             subscriberPIDs.reduce(0) { $0 + ProcessStats.cpuNanoseconds(of: $1) }]
        }
        for blockIndex in 0..<(3 * perSide) {
            let side = blockIndex % 3
            let measured = (blockIndex / 3) * block >= warmup
            let before = cpuNow()
            for _ in 0..<block {
                let sent = monotonicNanoseconds()
                testbed.portal.change(namespace: Self.sides[side].namespace, key: "ping", value: sent)
                testbed.portal.flush()
                var last: Int64 = 0
                for child in children[side] {
                    guard let line = child.readLine(timeout: .seconds(10)) else {
                        throw HarnessError("change \(sent) of block \(blockIndex) did not reach every \(Self.sides[side].kind.rawValue) connection (process \(child.pid))")
                    }
                    let words = line.split(separator: " ").compactMap { Int64($0) }
                    guard words.count == 2, words[0] == sent else { throw HarnessError("unexpected line \(line) for \(sent)") }
                    last = max(last, words[1])
                }
                if measured { latencies[side].append(last - sent) }
            }
            usleep(2_000)  // the last messages of the block are read everywhere before its CPU time is read
            if measured { cpu[side] = zip(cpu[side], zip(cpuNow(), before)).map { $0 + $1.0 - $1.1 } }
            testbed.portal.serve()
        }
        children.joined().forEach { $0.terminate() }
        sender.terminate()
        try report(latencies, cpu)
    }

    private func report(_ latencies: [[Int64]], _ cpu: [[Int64]]) throws {
        var report = ReportPart("daemon-fanout")
        let names = [
            "notifybusd: \(connections) subscriptions, one unicast `Events` each",
            "raw libdbus sender: the same \(connections) unicast `Events`, one per connection (anchor)",
            "dbus-daemon broadcasts `SettingChanged` to \(connections) match rules (second anchor)",
        ]
        let p50 = latencies.map { Samples($0).percentile(0.5) }, p99 = latencies.map { Samples($0).percentile(0.99) }
        report.line("Fan-out: one change → the last of \(connections) connections has it (\(processes) processes per side, "
            + "\(latencies[0].count) changes each in blocks of \(block) rotating over the sides, after \(warmup) of warm-up)")
        report.line()
        report.line("| path | p50 | p90 | p99 | notifybusd / this, p50 | notifybusd / this, p99 |")
        report.line("|---|---:|---:|---:|---:|---:|")
        for side in [1, 2, 0] {
            let ratios = side == 0 ? "| |" : "| \(Figure.ratio(p50[0], p50[side])) | \(Figure.ratio(p99[0], p99[side])) |"
            report.line("| \(names[side]) | \(Figure.microseconds(p50[side])) | \(Figure.microseconds(Samples(latencies[side]).percentile(0.9))) | "
                + "\(Figure.microseconds(p99[side])) " + ratios)
        }
        report.line()
        report.line("| CPU per change | notifybusd | raw sender | dbus-daemon | subscribers (the side’s \(processes) processes) |")
        report.line("|---|---:|---:|---:|---:|")
        for side in [1, 2, 0] {
            let count = Int64(max(1, latencies[side].count))
            report.line("| \(names[side]) | " + cpu[side].map { Figure.microseconds($0 / count) }.joined(separator: " | ") + " |")
        }
        report.line()
        func verdict(_ ours: Int64, _ anchor: Int64) -> String { ours * 10 <= anchor * 13 ? "met" : "missed" }
        report.line("notifybusd / raw unicast sender (goal ≤ 1.3×): p50 \(Figure.ratio(p50[0], p50[1])), \(verdict(p50[0], p50[1])); "
            + "p99 \(Figure.ratio(p99[0], p99[1])), \(verdict(p99[0], p99[1])). "
            + "Against the broadcast: p50 \(Figure.ratio(p50[0], p50[2])), p99 \(Figure.ratio(p99[0], p99[2])).")
        try report.finish()
    }
}
