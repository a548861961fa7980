import BenchSupport
import Harness

#if canImport(Glibc)
import Glibc
#endif

/// 4. notifybusd idle with the policy on, and its memory against the same daemon without it.
extension LifecycleRun {
    struct IdleResult {
        var threads: [(name: String, id: Int32, voluntary: Int64, involuntary: Int64)] = []
        var states: [String: String] = [:]
    }

    struct MemoryResult {
        var policy: Int64 = 0
        var plain: Int64 = 0
    }

    /// Nothing changes and no freeze is pending (every app frozen, but the focused one, so the
    /// monitor for messages to frozen apps is open, and none is woken): notifybusd's context
    /// switches per thread over `idleSeconds`, after 4 s of settling.
    func measureIdle() throws -> IdleResult {
        guard let bus else { return IdleResult() }
        Self.progress("notifybusd idle with the policy on: \(idleSeconds) s")
        try bus.waitForStates(apps: scopes.count, except: "org.bench.BusyB")
        let running = scopes.filter { !$0.isFrozen }.map(\.name)
        guard running == ["app-bench-org.bench.BusyB-1.scope"] else { throw HarnessError("not frozen before the idle window: \(running)") }
        sleep(4)
        let pid = bus.notifybusdPID
        let before = Self.switches(of: pid)
        sleep(UInt32(idleSeconds))
        let after = Self.switches(of: pid)
        var result = IdleResult()
        for (id, now) in after.sorted(by: { $0.key < $1.key }) {
            let then = before[id] ?? (now.name, 0, 0)
            result.threads.append((now.name, id, now.voluntary - then.voluntary, now.involuntary - then.involuntary))
        }
        result.states = try bus.lifecycleStates()
        return result
    }

    static func switches(of pid: pid_t) -> [Int32: (name: String, voluntary: Int64, involuntary: Int64)] {
        var threads: [Int32: (name: String, voluntary: Int64, involuntary: Int64)] = [:]
        for thread in ProcessStats.threads(of: pid) {
            threads[thread.id] = (thread.name, thread.voluntarySwitches, thread.involuntarySwitches)
        }
        return threads
    }

    /// Settled `VmRSS` of the daemon with the policy on (its windows known, the background apps
    /// frozen, 3 subscribers) vs the same binary without `--freeze-background`, same sources
    /// otherwise (`settings`), on a bus of its own with the same portal values and 3 subscribers.
    func measureMemory() throws -> MemoryResult {
        guard let bus, let tree else { return MemoryResult() }
        Self.progress("memory: notifybusd with and without --freeze-background")
        let plain = try BenchBed(settings: [
            "flush": Dictionary(uniqueKeysWithValues: (0..<Self.keys).map { ("k\($0)", Int64(0)) }),
            "busy": Dictionary(uniqueKeysWithValues: (0..<Self.keys).map { ("k\($0)", Int64(0)) }),
        ])
        defer { plain.stop() }
        // A runtime directory of its own: any notifybusd thaws, at its start, the cgroups listed
        // in the state file of its XDG_RUNTIME_DIR, which would undo the other daemon's freezes.
        let runtime = work + "/runtime-plain"
        let frozenBefore = scopes.filter { $0.isFrozen }.map(\.name)
        guard mkdir(runtime, 0o700) == 0 else { throw HarnessError("mkdir \(runtime)") }
        try plain.startDaemon(notifybusd, ["--source", "settings"], environment: ["XDG_RUNTIME_DIR": runtime])
        var holders: [ChildProcess] = []
        defer { holders.forEach { $0.terminate() } }
        for (index, namespace) in ["busy", "busy", "flush"].enumerated() {
            holders.append(try plain.subscriber(
                executable, kind: .daemon, name: "plain-\(index)", ["--cgroup", tree.topDirectory + "/bench", "--namespace", namespace]).child)
        }
        sleep(2)
        let result = MemoryResult(policy: settledResident(bus.notifybusdPID), plain: settledResident(plain.notifybusdPID))
        let frozenAfter = scopes.filter { $0.isFrozen }.map(\.name)
        guard frozenAfter == frozenBefore else {
            throw HarnessError("the freezes changed while the anchor daemon started: \(frozenBefore) → \(frozenAfter)")
        }
        return result
    }

    func writeIdle(_ idle: IdleResult, memory: MemoryResult, residentAfter: Int64) throws {
        var report = ReportPart("lifecycle-4-idle")
        let voluntary = idle.threads.reduce(Int64(0)) { $0 + $1.voluntary }
        let involuntary = idle.threads.reduce(Int64(0)) { $0 + $1.involuntary }
        report.line("4. notifybusd with the policy on, idle: \(idleSeconds) s with nothing changing and no freeze pending "
            + "(\(idle.states.filter { $0.value == "frozen" }.count) apps frozen, \(idle.states.filter { $0.value == "foreground" }.count) in the foreground)")
        report.line()
        report.header(["thread", "wake-ups (voluntary context switches)", "involuntary"])
        for thread in idle.threads { report.row(["\(thread.name) (\(thread.id))", "\(thread.voluntary)", "\(thread.involuntary)"]) }
        report.row(["all \(idle.threads.count) threads", "\(voluntary)", "\(involuntary)"])
        report.line()
        report.line("Idle wake-ups (goal 0): \(voluntary) — \(Figure.verdict(voluntary == 0)).")
        report.line()
        let extra = memory.policy - memory.plain
        report.header(["notifybusd, settled `VmRSS` (least of 5 readings over 250 ms)", "KiB"])
        report.row(["`--source settings --source lifecycle --freeze-background`, \(treeApps) windows known, all but one frozen, 3 subscribers", "\(memory.policy)"])
        report.row(["`--source settings`, no policy, on a bus of its own with the same values and 3 subscribers (anchor)", "\(memory.plain)"])
        report.row(["the first, after the whole run", "\(residentAfter)"])
        report.line()
        report.line("With the policy on: \(extra >= 0 ? "+" : "")\(extra) KiB (\(Figure.ratio(memory.policy, memory.plain))); goal ≤ +1024 KiB: "
            + "\(Figure.verdict(extra <= 1024)).")
        try report.finish()
    }
}
