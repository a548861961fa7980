import BenchSupport
import Harness
#if canImport(Glibc)
import Glibc
#endif

/// `DaemonBench frozen`: two subscriber processes, each in a cgroup of its own, are frozen by the
/// cgroup v2 freezer while the portal changes `keys` keys `changes` times in all (round robin,
/// each value new); then each is thawed alone (the other still frozen; which goes first alternates
/// by round), and its time from the write of `0` to `cgroup.freeze` until it holds every key's last
/// value is measured, with the messages it received meanwhile. One subscriber goes through
/// notifybusd (which holds and collapses for it), the anchor has a match rule on the same source
/// signals (the bus queues them all for it).
struct FrozenBenchmark {
    let notifybusd: String
    let executable: String
    let rounds: Int
    let keys: Int
    let changes: Int

    init(arguments: Arguments, executable: String) {
        notifybusd = arguments.string("notifybusd", default: "notifybusd")
        self.executable = executable
        rounds = arguments.integer("rounds", default: 7)
        keys = arguments.integer("keys", default: 10)
        changes = max(keys, arguments.integer("changes", default: 1000))
    }

    private struct Sample {
        var nanoseconds: [Int64] = []
        var messages: [Int64] = []
        var notifications: [Int64] = []
    }

    func run() throws {
        let names = (0..<keys).map { "k\($0)" }
        let testbed = try BenchBed(settings: ["bench": Dictionary(uniqueKeysWithValues: names.map { ($0, Int64(0)) })])
        defer { testbed.stop() }
        try testbed.startDaemon(notifybusd)
        guard let mount = Cgroup2.mount() else { throw HarnessError("no cgroup2 mount in /proc/self/mountinfo") }
        let tree = try AppScopes(mountPoint: mount.mountPoint, mountRoot: mount.root, name: "notifybus-bench-\(getpid())")
        defer { tree.remove() }
        let groups = [try tree.makeScope(name: "raw.scope"), try tree.makeScope(name: "daemon.scope")]
        var children: [ChildProcess] = []
        for (kind, group) in zip([Subscriber.Kind.raw, .daemon], groups) {
            children.append(try testbed.subscriber(
                executable, kind: kind, name: "\(kind.rawValue)-subscriber",
                ["--report", "done", "--namespace", "bench", "--keys", "\(keys)", "--cgroup", group.directory]).child)
        }
        var samples = [Sample(), Sample()]
        var emitting: [Int64] = []
        for round in 0..<rounds {
            let base = Int64(round + 1) * 1_000_000
            for child in children { child.send("expect \(base + Int64(changes - keys))") }
            usleep(20_000)
            for group in groups { try group.freezeAndWait() }
            usleep(200_000)  // the daemon has seen `frozen 1` (inotify) and suspended the subscription
            let started = monotonicNanoseconds()
            var last: [String: Int64] = [:]
            for index in 0..<changes {
                let key = names[index % keys]
                last[key] = base + Int64(index)
                testbed.portal.change(namespace: "bench", key: key, value: base + Int64(index))
            }
            testbed.portal.flush()
            try testbed.waitUntilDaemonHas(namespace: "bench", last)
            emitting.append(monotonicNanoseconds() - started)
            let order = round % 2 == 0 ? [1, 0] : [0, 1]
            for side in order {
                let thawed = monotonicNanoseconds()
                try groups[side].setFrozen(false)
                guard let line = children[side].readLine(timeout: .seconds(30)) else {
                    throw HarnessError("the \(side == 0 ? "raw" : "daemon") subscriber did not catch up within 30 s")
                }
                let words = line.split(separator: " ").compactMap { Int64($0) }
                guard words.count == 3 else { throw HarnessError("unexpected line from a subscriber: \(line)") }
                samples[side].nanoseconds.append(words[0] - thawed)
                samples[side].messages.append(words[1])
                samples[side].notifications.append(words[2])
            }
            usleep(100_000)
        }
        children.forEach { $0.terminate() }
        try report(raw: samples[0], daemon: samples[1], emitting: emitting)
    }

    private func report(raw: Sample, daemon: Sample, emitting: [Int64]) throws {
        var report = ReportPart("daemon-frozen")
        let rawTime = Samples(raw.nanoseconds).percentile(0.5), daemonTime = Samples(daemon.nanoseconds).percentile(0.5)
        let rawMessages = Samples(raw.messages).percentile(0.5), daemonMessages = Samples(daemon.messages).percentile(0.5)
        report.line("Frozen subscriber: \(keys) keys changed \(changes) times while it was frozen (cgroup v2 freezer); \(rounds) rounds, each subscriber thawed alone")
        report.line()
        report.line("| subscriber | messages after the thaw (median, max) | notifications | thaw → holds every current value, median | min | max |")
        report.line("|---|---:|---:|---:|---:|---:|")
        for (name, sample) in [("raw D-Bus match rule on `SettingChanged` (anchor)", raw), ("through notifybusd (`Subscribe`, follow-freezer)", daemon)] {
            report.line("| \(name) | \(Samples(sample.messages).percentile(0.5)) (\(sample.messages.max() ?? 0)) | "
                + "\(Samples(sample.notifications).percentile(0.5)) | \(Figure.milliseconds(Samples(sample.nanoseconds).percentile(0.5))) | "
                + "\(Figure.milliseconds(sample.nanoseconds.min() ?? 0)) | \(Figure.milliseconds(sample.nanoseconds.max() ?? 0)) |")
        }
        report.line()
        let timeMet = daemonTime * 10 <= rawTime && daemonTime <= 50_000_000
        report.line("Messages: \(daemonMessages) against \(rawMessages) (goal 2 against \(changes)): \(daemonMessages == 2 ? "met" : "missed").")
        report.line("Catch-up time: \(Figure.ratio(daemonTime, rawTime)) the raw subscriber's (\(Figure.milliseconds(daemonTime)) vs \(Figure.milliseconds(rawTime)); "
            + "goal ≤ 0.10× and ≤ 50 ms): \(timeMet ? "met" : "missed").")
        report.line("Per round (raw, daemon): " + zip(raw.nanoseconds, daemon.nanoseconds).map { "\(Figure.milliseconds($0)) / \(Figure.milliseconds($1))" }.joined(separator: ", "))
        report.line("Sending the \(changes) signals until the daemon's store had the last values: median \(Figure.milliseconds(Samples(emitting).percentile(0.5))).")
        try report.finish()
    }
}
