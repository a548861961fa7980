import BenchSupport
import Harness
#if canImport(Glibc)
import Glibc
#endif

/// `DaemonBench attacks`: a well-behaved subscriber's live latency through notifybusd (as
/// `LatencyBenchmark` measures it: a portal `SettingChanged` carrying its send time → the
/// subscriber process has decoded the value from its `Events`; the next signal leaves once it
/// has), with no attacker and then under each hostile client of the specification (`Attack.all`), each run by
/// an `Attacker` process at full speed for the whole measurement; the daemon's memory; and the
/// answer times of another client's `Get Version` (`VersionProbe`, every 10 ms throughout).
///
/// Each attack gets a fresh bus and daemon (`BenchBed`) and one subscriber (`settings/bench/**`).
/// First `signals` signals with no attacker (after `warmup`), then the daemon's idle size (the
/// least `VmRSS` of 5 readings over 250 ms), then the attacker starts (`stopped`: SIGSTOP once it
/// has subscribed; `sleeper`: the events that fill its queue), `settle` ms later the daemon's peak
/// (`VmHWM`) is reset (`/proc/PID/clear_refs`), and `signals` more are measured under attack, for
/// at most `seconds` (all of `seconds` for an attack that `measuresWholeWindow`), with the CPU
/// time of every process in that window. Then the peak, whether the daemon still answers `Get
/// Version`, the attacker's report, the daemon's size a second after the attacker left, and its log.
///
/// Where the attacker's largest message is larger than 8 MiB (b and h: 30 MB bodies), the bound on
/// `Get Version` is a plain libdbus service's answer time under the same load, measured in the same
/// run (specification: D-Bus interface, "Responsiveness"): then `DaemonBench plain` starts on the same bus, a second
/// attacker of the same kind sends the same calls to it (`--destination`), a second probe asks it
/// for `Version`, and the subscriber's signals go on through notifybusd as before, for as long as
/// the daemon's window lasted (after the same `settle`).
///
/// Goals (Benchmarks/README.md, "Targets"): p99 under attack ≤ 2× the p99 with no attacker (all the
/// daemons' runs with no attacker pooled; each daemon's own is shown beside it), and peak ≤ idle +
/// 32 MiB + twice the attacker's largest message + its held entries (1 KiB each).
struct AttackBenchmark {
    let notifybusd: String
    let executable: String
    let signals: Int
    let warmup: Int
    let seconds: Int
    let settle: Int
    let attacks: [Attack]

    init(arguments: Arguments, executable: String) {
        notifybusd = arguments.string("notifybusd", default: "notifybusd")
        self.executable = executable
        signals = arguments.integer("signals", default: 1000)
        warmup = arguments.integer("warmup", default: 100)
        seconds = arguments.integer("seconds", default: 30)
        settle = arguments.integer("settle", default: 300)
        let all = Attack.all(sleeperQueue: arguments.integer("sleeper-queue", default: 65_536))
        let only = arguments.string("only", default: "abcdefgh")
        attacks = all.filter { only.contains($0.letter) }
    }

    /// What one attack's run measured.
    struct Outcome {
        var quiet = Phase()
        var attacked = Phase()
        var window: Int64 = 0
        var idle: Int64 = 0
        var peak: Int64 = 0
        var peakReset = false
        var after: Int64 = 0
        var largestMessage = 0
        var answersVersion = false
        /// `report` words of the attacker: sent, answered, Events received, answers by name.
        var report: [String] = []
        /// CPU time in the measured window of notifybusd, dbus-daemon, the attacker and the
        /// subscriber (all threads), in nanoseconds.
        var cpu: [Int64] = [0, 0, 0, 0]
        /// Another client's `Get Version` calls with no attacker and in the measured window: calls,
        /// failed, p50, p99 and slowest (ns), as `VersionProbe` reports them.
        var probeQuiet: [Int64] = []
        var probeAttacked: [Int64] = []
        /// The plain libdbus service's `Get Version` calls under the same attack (messages past 8
        /// MiB only), as `probeAttacked`; and its attacker's `report` words.
        var probePlain: [Int64] = []
        var plainReport: [String] = []
        /// What notifybusd logged from the attacker's start until a second after it left.
        var log: [Substring] = []
    }

    /// Latencies of one phase, and the signals that did not arrive within 10 s.
    struct Phase {
        var latencies: [Int64] = []
        var lost = 0
    }

    func run() throws {
        var outcomes: [Outcome] = []
        for attack in attacks {
            let line = Array("DaemonBench attacks: \(attack.letter) (\(attack.kind.rawValue))\n".utf8)
            _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
            outcomes.append(try measure(attack))
        }
        var report = AttackReport(attacks: attacks, outcomes: outcomes, signals: signals, warmup: warmup)
        try report.write()
    }

    private func measure(_ attack: Attack) throws -> Outcome {
        let testbed = try BenchBed(settings: ["bench": ["ping": 0], "fill": ["k": 0]], limits: attack.limits)
        defer { testbed.stop() }
        try testbed.startDaemon(notifybusd)
        let pid = testbed.notifybusdPID
        let subscriber = try testbed.subscriber(
            executable, kind: .daemon, name: "subscriber", ["--report", "each", "--namespace", "bench"]).child
        defer { subscriber.terminate() }
        let probe = try ChildProcess.start(
            [executable, "probe", "--address", testbed.address], standardError: "\(testbed.directory)/probe.log")
        defer { probe.terminate() }
        guard probe.readLine(timeout: .seconds(20), meanwhile: testbed.portal.serve) == "ready" else {
            throw HarnessError("the Version probe did not start: \(readFile("\(testbed.directory)/probe.log") ?? "")")
        }
        usleep(100_000)
        var outcome = Outcome()
        _ = probeReport(probe, testbed)
        outcome.quiet = try pings(testbed, subscriber, count: signals)
        outcome.probeQuiet = probeReport(probe, testbed)
        outcome.idle = settledResident(pid)

        let daemonLog = "\(testbed.directory)/notifybusd.log"
        let logStart = readFile(daemonLog)?.utf8.count ?? 0
        let log = "\(testbed.directory)/attacker.log"
        let attacker = try ChildProcess.start(
            [executable, "attacker", "--kind", attack.kind.rawValue, "--address", testbed.address] + attack.options,
            standardError: log)
        defer { attacker.terminate() }
        guard let ready = attacker.readLine(timeout: .seconds(120), meanwhile: testbed.portal.serve), ready.hasPrefix("ready") else {
            throw HarnessError("the attacker (\(attack.kind.rawValue)) did not start: \(readFile(log) ?? "")")
        }
        outcome.largestMessage = Int(ready.split(separator: " ").last ?? "") ?? 0
        if attack.kind == .stopped {
            kill(attacker.pid, SIGSTOP)
            for _ in 0..<5000 where ProcessStats.state(of: attacker.pid) != "T" { usleep(1_000) }
        }
        attacker.send("go")
        // In bursts of 100 (20 KB), which the bus queues for the daemon whatever its limits.
        for burst in stride(from: 0, to: attack.fill, by: 100) {
            let last = min(attack.fill, burst + 100)
            for index in (burst + 1)...last { testbed.portal.change(namespace: "fill", key: "k", value: Int64(index)) }
            testbed.portal.flush()
            try testbed.waitUntilDaemonHas(namespace: "fill", ["k": Int64(last)])
        }
        let settled = monotonicNanoseconds() + Int64(settle) * 1_000_000
        while monotonicNanoseconds() < settled {
            testbed.portal.serve()
            usleep(10_000)
        }
        outcome.peakReset = ProcessStats.resetPeakResident(of: pid)
        _ = probeReport(probe, testbed)
        let processes = [pid, testbed.busDaemonPID, attacker.pid, subscriber.pid]
        let cpuBefore = processes.map(ProcessStats.cpuNanoseconds(of:))
        let started = monotonicNanoseconds()
        var sampled: Int64 = 0
        let count = attack.measuresWholeWindow ? Int.max - warmup : signals
        outcome.attacked = try pings(testbed, subscriber, count: count, deadline: started + Int64(seconds) * 1_000_000_000) {
            sampled = max(sampled, ProcessStats.statusKiB("VmRSS", of: pid))
        }
        outcome.window = monotonicNanoseconds() - started
        outcome.cpu = zip(processes.map(ProcessStats.cpuNanoseconds(of:)), cpuBefore).map { $0 - $1 }
        outcome.probeAttacked = probeReport(probe, testbed)
        outcome.peak = max(outcome.peakReset ? ProcessStats.statusKiB("VmHWM", of: pid) : 0, sampled)
        outcome.answersVersion = answersVersion(testbed)

        if attack.kind == .stopped { kill(attacker.pid, SIGCONT) }
        attacker.send("stop")
        if let report = attacker.readLine(timeout: .seconds(30), meanwhile: testbed.portal.serve), report.hasPrefix("report ") {
            outcome.report = report.split(separator: " ").dropFirst().map(String.init)
        }
        attacker.terminate()
        usleep(1_000_000)
        outcome.after = settledResident(pid)
        outcome.log = (readFile(daemonLog) ?? "").utf8.dropFirst(logStart).split(separator: UInt8(ascii: "\n")).map { Substring($0) }
        if outcome.largestMessage > Self.anchoredMessage {
            (outcome.probePlain, outcome.plainReport) = try plainService(under: attack, testbed, subscriber, window: outcome.window)
        }
        return outcome
    }

    /// Past this size of the attacker's largest message (8 MiB), `Get Version`'s bound is the plain
    /// libdbus service's answer time under the same attack.
    static let anchoredMessage = 8 << 20

    /// `DaemonBench plain` on the same bus under an attacker of `attack`'s kind sending it the same
    /// calls, its `Version` asked by a probe of its own, the subscriber's signals going on through
    /// notifybusd meanwhile, for `window` ns after `settle` ms: the probe's report and the attacker's.
    private func plainService(
        under attack: Attack, _ testbed: BenchBed, _ subscriber: ChildProcess, window: Int64
    ) throws -> (probe: [Int64], report: [String]) {
        let line = Array("DaemonBench attacks: \(attack.letter) against the plain libdbus service\n".utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        let name = PlainService.defaultName
        let plain = try ChildProcess.start(
            [executable, "plain", "--address", testbed.address, "--name", name], standardError: "\(testbed.directory)/plain.log")
        defer { plain.terminate() }
        guard plain.readLine(timeout: .seconds(20), meanwhile: testbed.portal.serve) == "ready" else {
            throw HarnessError("the plain service did not start: \(readFile("\(testbed.directory)/plain.log") ?? "")")
        }
        let probe = try ChildProcess.start(
            [executable, "probe", "--address", testbed.address, "--destination", name], standardError: "\(testbed.directory)/plain-probe.log")
        defer { probe.terminate() }
        guard probe.readLine(timeout: .seconds(20), meanwhile: testbed.portal.serve) == "ready" else {
            throw HarnessError("the plain service's probe did not start: \(readFile("\(testbed.directory)/plain-probe.log") ?? "")")
        }
        let log = "\(testbed.directory)/plain-attacker.log"
        let attacker = try ChildProcess.start(
            [executable, "attacker", "--kind", attack.kind.rawValue, "--address", testbed.address, "--destination", name] + attack.options,
            standardError: log)
        defer { attacker.terminate() }
        guard let ready = attacker.readLine(timeout: .seconds(120), meanwhile: testbed.portal.serve), ready.hasPrefix("ready") else {
            throw HarnessError("the attacker (\(attack.kind.rawValue)) of the plain service did not start: \(readFile(log) ?? "")")
        }
        attacker.send("go")
        let settled = monotonicNanoseconds() + Int64(settle) * 1_000_000
        while monotonicNanoseconds() < settled {
            testbed.portal.serve()
            usleep(10_000)
        }
        _ = probeReport(probe, testbed)
        _ = try pings(testbed, subscriber, count: .max - warmup, deadline: monotonicNanoseconds() + window)
        let report = probeReport(probe, testbed)
        attacker.send("stop")
        var words: [String] = []
        if let line = attacker.readLine(timeout: .seconds(30), meanwhile: testbed.portal.serve), line.hasPrefix("report ") {
            words = line.split(separator: " ").dropFirst().map(String.init)
        }
        return (report, words)
    }

    /// `warmup` signals then `count` measured ones (until `deadline`), one at a time; `sample`
    /// runs after every tenth.
    private func pings(
        _ testbed: BenchBed, _ subscriber: ChildProcess, count: Int, deadline: Int64 = .max, sample: () -> Void = {}
    ) throws -> Phase {
        var samples = Phase()
        for index in 0..<(warmup + count) {
            if index >= warmup, monotonicNanoseconds() >= deadline { break }
            let sent = monotonicNanoseconds()
            testbed.portal.change(namespace: "bench", key: "ping", value: sent)
            testbed.portal.flush()
            var received: Int64?
            while received == nil, let line = subscriber.readLine(timeout: .seconds(10)) {
                let words = line.split(separator: " ").compactMap { Int64($0) }
                guard words.count == 2 else { throw HarnessError("unexpected line from the subscriber: \(line)") }
                if words[0] == sent { received = words[1] }  // an older one arrived late: skipped
            }
            if index >= warmup {
                if let received { samples.latencies.append(received - sent) } else { samples.lost += 1 }
                if index % 10 == 0 { sample() }
            }
            testbed.portal.serve()
        }
        return samples
    }

    /// The probe's samples since its last report (see `Outcome.probeQuiet`); empty when it does
    /// not report within 30 s.
    private func probeReport(_ probe: ChildProcess, _ testbed: BenchBed) -> [Int64] {
        probe.send("report")
        guard let line = probe.readLine(timeout: .seconds(30), meanwhile: testbed.portal.serve), line.hasPrefix("probe ") else {
            return []
        }
        return line.split(separator: " ").dropFirst().compactMap { Int64($0) }
    }

    /// The daemon's resident size once settled: the least `VmRSS` of 5 readings over 250 ms, in KiB.
    private func settledResident(_ pid: pid_t) -> Int64 {
        var least = Int64.max
        for _ in 0..<5 {
            least = min(least, ProcessStats.statusKiB("VmRSS", of: pid))
            usleep(50_000)
        }
        return least
    }

    /// Whether the daemon is alive and answers `Get` of `Version` (within 10 s) with 2.
    private func answersVersion(_ testbed: BenchBed) -> Bool {
        guard ProcessStats.state(of: testbed.notifybusdPID).map({ $0 != "Z" }) ?? false else { return false }
        let reply = try? testbed.portal.connection.call(
            destination: BenchBed.daemonName, path: BenchBed.daemonPath, interface: "org.freedesktop.DBus.Properties", member: "Get",
            [.string(BenchBed.daemonName), .string("Version")])
        guard case .variant(.uint32(let version))? = reply?.first else { return false }
        return version == 2
    }
}
