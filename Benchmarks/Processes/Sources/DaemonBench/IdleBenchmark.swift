import BenchSupport
import Harness
#if canImport(Glibc)
import Glibc
#endif

/// `DaemonBench idle`: notifybusd serving `subscriptions` subscriptions (one per connection, from
/// one subscriber process) while nothing changes, side by side with `udevadm monitor` and, when
/// given, minimal Swift programs, all started together and measured over the same `seconds`
/// (default 60) after `settle` seconds (default 4) of settling:
/// voluntary context switches of every thread (from `/proc/PID/task/*/status`, the difference
/// between the window's start and end) and resident memory. Then the memory of suspended
/// subscriptions: `memory-subscriptions` of them (50 per connection), each suspended and then
/// holding 100 keys, measured from the daemon's `RssAnon` and `VmRSS` before and after.
struct IdleBenchmark {
    let notifybusd: String
    let executable: String
    let seconds: Int
    let subscriptions: Int
    let udevadm: String
    let baseline: String?
    let ownExecutor: String?
    let memorySubscriptions: Int
    let settle: Int
    /// The name of the report's parts (`daemon-idle`, and `daemon-idle-memory`).
    let part: String

    init(arguments: Arguments, executable: String) {
        notifybusd = arguments.string("notifybusd", default: "notifybusd")
        self.executable = executable
        seconds = max(1, arguments.integer("seconds", default: 60))
        subscriptions = arguments.integer("subscriptions", default: 10)
        udevadm = arguments.string("udevadm", default: "/usr/bin/udevadm")
        baseline = arguments.optional("baseline")
        ownExecutor = arguments.optional("own-executor")
        settle = max(0, arguments.integer("settle", default: 4))
        part = arguments.string("part", default: "daemon-idle")
        memorySubscriptions = max(50, arguments.integer("memory-subscriptions", default: 200) / 50 * 50)
    }

    func run() throws {
        let testbed = try BenchBed(settings: ["bench": ["k0": 0]])
        defer { testbed.stop() }
        try testbed.startDaemon(notifybusd)
        let holder = try testbed.subscriber(
            executable, kind: .daemon, name: "idle-subscriber",
            ["--report", "none", "--namespace", "bench", "--connections", "\(subscriptions)"]).child
        var measured: [(name: String, process: ChildProcess)] = [("notifybusd, \(subscriptions) subscriptions", try daemonHandle(testbed))]
        measured.append(("udevadm monitor (anchor)", try ChildProcess.start(
            [udevadm, "monitor"], standardError: "\(testbed.directory)/udevadm.log")))
        if let baseline {
            measured.append(("minimal Swift program (scripts/idle/Baseline.swift)", try ChildProcess.start(
                [baseline], standardError: "\(testbed.directory)/baseline.log")))
        }
        if let ownExecutor {
            measured.append(("the same, its tasks on an executor of its own (scripts/idle/OwnExecutor.swift)", try ChildProcess.start(
                [ownExecutor], standardError: "\(testbed.directory)/own-executor.log")))
        }
        sleep(UInt32(settle))  // start-up is over
        let before = measured.map { ProcessStats.threads(of: $0.process.pid) }
        sleep(UInt32(seconds))
        let after = measured.map { ProcessStats.threads(of: $0.process.pid) }

        var report = ReportPart(part)
        report.line("Idle: \(seconds) s with nothing changing, after \(settle) s of settling, all measured over the same window")
        report.line()
        report.line("| process | wake-ups in \(seconds) s (voluntary context switches, all threads) | per 10 s | RSS (KiB) | RssAnon (KiB) | threads |")
        report.line("|---|---:|---:|---:|---:|---:|")
        for (index, entry) in measured.enumerated() {
            let pid = entry.process.pid
            let wakeUps = switches(before[index], after[index]).reduce(0) { $0 + $1.1 }
            let alive = kill(pid, 0) == 0 && !after[index].isEmpty
            report.line("| \(entry.name) | \(alive ? "\(wakeUps)" : "exited early (its log is in \(testbed.directory))") | "
                + "\(Figure.decimal(Double(wakeUps) * 10 / Double(seconds), places: 1)) | \(ProcessStats.statusKiB("VmRSS", of: pid)) | "
                + "\(ProcessStats.statusKiB("RssAnon", of: pid)) | \(after[index].count) |")
        }
        report.line()
        report.line("notifybusd's threads: " + switches(before[0], after[0]).map { "\($0.0) \($0.1)" }.joined(separator: ", ")
            + "; ended in the window: \(churn(before[0], after[0])), started: \(churn(after[0], before[0]))")
        try report.finish()
        for entry in measured.dropFirst() { entry.process.terminate() }
        holder.terminate()
        try memory(testbed)
    }

    /// The daemon's process, as a `ChildProcess`-like handle for the table (the testbed owns it).
    private func daemonHandle(_ testbed: BenchBed) throws -> ChildProcess {
        guard let daemon = testbed.notifybusd else { throw HarnessError("notifybusd is not running") }
        return daemon
    }

    /// Per thread present at both ends (name and id), its voluntary switches in between.
    private func switches(_ before: [ProcessStats.Thread], _ after: [ProcessStats.Thread]) -> [(String, Int64)] {
        let start = Dictionary(uniqueKeysWithValues: before.map { ($0.id, $0.voluntarySwitches) })
        return after.compactMap { thread in
            start[thread.id].map { ("\(thread.name) (\(thread.id))", thread.voluntarySwitches - $0) }
        }
    }

    /// The threads of `these` that are not in `those`, with their switches, or "none".
    private func churn(_ these: [ProcessStats.Thread], _ those: [ProcessStats.Thread]) -> String {
        let other = Set(those.map(\.id))
        let names = these.filter { !other.contains($0.id) }.map { "\($0.name) (\($0.id), \($0.voluntarySwitches) switches)" }
        return names.isEmpty ? "none" : names.joined(separator: ", ")
    }

    private func memory(_ testbed: BenchBed) throws {
        let keys = (0..<100).map { "k\($0)" }
        for key in keys { testbed.portal.change(namespace: "mem", key: key, value: 1) }
        testbed.portal.flush()
        try testbed.waitUntilDaemonHas(namespace: "mem", Dictionary(uniqueKeysWithValues: keys.map { ($0, Int64(1)) }))
        let pid = testbed.notifybusdPID
        func sample() -> (anon: Int64, rss: Int64) {
            usleep(500_000)
            return (ProcessStats.statusKiB("RssAnon", of: pid), ProcessStats.statusKiB("VmRSS", of: pid))
        }
        let empty = sample()
        let holder = try testbed.subscriber(
            executable, kind: .daemon, name: "memory-subscriber",
            ["--report", "none", "--namespace", "mem", "--connections", "\(memorySubscriptions / 50)", "--subscriptions", "50", "--suspend"]).child
        let suspended = sample()
        for key in keys { testbed.portal.change(namespace: "mem", key: key, value: 2) }
        testbed.portal.flush()
        try testbed.waitUntilDaemonHas(namespace: "mem", Dictionary(uniqueKeysWithValues: keys.map { ($0, Int64(2)) }))
        let holding = sample()
        for round in Int64(3)...12 {
            for key in keys { testbed.portal.change(namespace: "mem", key: key, value: round) }
        }
        testbed.portal.flush()
        try testbed.waitUntilDaemonHas(namespace: "mem", Dictionary(uniqueKeysWithValues: keys.map { ($0, Int64(12)) }))
        let more = sample()
        holder.terminate()
        let released = sample()

        let count = Double(memorySubscriptions)
        func perSubscription(_ kib: Int64) -> String { Figure.decimal(Double(kib) * 1024 / count, places: 0) + " B" }
        var report = ReportPart(part + "-memory")
        report.line("Memory of suspended subscriptions: \(memorySubscriptions) subscriptions (\(memorySubscriptions / 50) connections × 50) to `settings/mem/**`, suspended, then 100 keys changed once, then 10 more times")
        report.line()
        report.line("| notifybusd | RssAnon (KiB) | VmRSS (KiB) | per subscription, from RssAnon |")
        report.line("|---|---:|---:|---:|")
        report.line("| the store holding 100 keys, no subscriptions | \(empty.anon) | \(empty.rss) | |")
        report.line("| + \(memorySubscriptions) suspended subscriptions | \(suspended.anon) | \(suspended.rss) | \(perSubscription(suspended.anon - empty.anon)) |")
        report.line("| + each holding 100 keys | \(holding.anon) | \(holding.rss) | \(perSubscription(holding.anon - suspended.anon)) more, \(perSubscription(holding.anon - empty.anon)) in all |")
        report.line("| after 1,000 more changes of the same 100 keys | \(more.anon) | \(more.rss) | \(perSubscription(more.anon - holding.anon)) more |")
        report.line("| after their connection closed | \(released.anon) | \(released.rss) | |")
        try report.finish()
    }
}
