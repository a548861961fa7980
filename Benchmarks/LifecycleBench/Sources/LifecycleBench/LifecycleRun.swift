import BenchDBus
import ChildProcess
import NotifyBus

#if canImport(Glibc)
import Glibc
#endif

/// `LifecycleBench run`: the whole measurement, on one headless sway, one private bus and one
/// `notifybusd --freeze-background` (see Benchmarks/lifecycle-bench.sh for what each part
/// measures). Markdown on standard output, progress on standard error.
final class LifecycleRun {
    let notifybusd: String
    let focusThaw: String
    let executable: String
    let work: String
    let treeName: String
    let rounds: Int
    let flushRounds: Int
    let busySeconds: Int
    let idleSeconds: Int
    let wakeRounds: Int
    let delay = 2
    static let thawApps = 5
    static let keys = 10
    /// Windows opened: the thaw apps, two busy apps, the subscriber's app and the woken app.
    var treeApps: Int { Self.thawApps + 4 }

    private var tree: CgroupTree?
    private var sway: Sway?
    private(set) var bus: Bus?
    private var children: [ChildProcess] = []

    init(arguments: Arguments, executable: String) throws(BenchError) {
        notifybusd = arguments.string("notifybusd", default: "notifybusd")
        focusThaw = arguments.string("focus-thaw", default: "FocusThaw")
        self.executable = executable
        guard let work = arguments.optional("work") else { throw BenchError("--work DIR is needed") }
        self.work = work
        treeName = arguments.string("tree", default: "nb-lifebench-\(getpid())")
        rounds = max(2, arguments.integer("rounds", default: 50))
        flushRounds = max(1, arguments.integer("flush-rounds", default: 5))
        busySeconds = max(1, arguments.integer("busy-seconds", default: 60))
        idleSeconds = max(1, arguments.integer("idle-seconds", default: 60))
        wakeRounds = max(2, arguments.integer("wake-rounds", default: 30))
    }

    static func progress(_ text: String) {
        let bytes = Array("LifecycleBench: \(text)\n".utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }

    func run() throws(BenchError) {
        defer { cleanUp() }
        let tree = try CgroupTree(name: treeName)
        self.tree = tree
        let sway = try Sway(directory: work + "/sway")
        self.sway = sway
        let bus = try Bus(directory: work + "/bus", settings: [
            "flush": Dictionary(uniqueKeysWithValues: (0..<Self.keys).map { ("k\($0)", Int64(0)) }),
            "busy": Dictionary(uniqueKeysWithValues: (0..<Self.keys).map { ("k\($0)", Int64(0)) }),
        ])
        self.bus = bus

        Self.progress("opening the windows")
        let busyCommand = ["/bin/sh", "-c", "while :; do date; sleep 0.05; done"]
        let busyFrozen = try sway.open("org.bench.BusyA", in: try tree.makeScope(for: "org.bench.BusyA"), running: busyCommand)
        let busyRunning = try sway.open("org.bench.BusyB", in: try tree.makeScope(for: "org.bench.BusyB"), running: busyCommand)
        let sub = try sway.open("org.bench.Sub", in: try tree.makeScope(for: "org.bench.Sub"))
        let wake = try sway.open(Self.wakeApp, in: try tree.makeScope(for: Self.wakeApp))
        var thaw: [Sway.Window] = []
        for index in 0..<Self.thawApps {
            let id = "org.bench.Thaw\(index)"
            thaw.append(try sway.open(id, in: try tree.makeScope(for: id)))
        }

        Self.progress("starting notifybusd --freeze-background")
        let runtime = work + "/runtime"
        guard mkdir(runtime, 0o700) == 0 else { throw BenchError("mkdir \(runtime)") }
        let config = work + "/lifecycle.conf"
        try writeFile(config, "cgroup-root = \(tree.appSlice)\n")
        let environment = ["XDG_RUNTIME_DIR": runtime, "SWAYSOCK": sway.socket, "WAYLAND_DISPLAY": sway.directory + "/wayland-1"]
        try bus.startDaemon(notifybusd, [
            "--source", "settings", "--source", "lifecycle", "--freeze-background", "--toplevels", "sway",
            "--freeze-config", config, "--freeze-delay", "\(delay)", "--freeze-wake-grace", "1",
        ], environment: environment)
        let busySubscribers = [
            try bus.subscriber(executable, name: "busy-a", cgroup: busyFrozen.scope.directory, ["--namespace", "busy"]),
            try bus.subscriber(executable, name: "busy-b", cgroup: busyRunning.scope.directory, ["--namespace", "busy"]),
        ]
        children += busySubscribers
        let subscriber = try bus.subscriber(
            executable, name: "sub", cgroup: sub.scope.directory, ["--namespace", "flush", "--report", "done", "--keys", "\(Self.keys)"])
        children.append(subscriber)
        let service = "org.notifybus.Bench.Wake"
        let responder = try bus.responder(executable, name: service, cgroup: wake.scope.directory)
        children.append(responder)
        let caller = try RawConnection(address: bus.address)
        let anchor = try ChildProcess.start([focusThaw, sway.socket], standardError: work + "/focus-thaw.log")
        children.append(anchor)
        guard anchor.readLine(timeout: .seconds(10)) == "ready" else {
            throw BenchError("FocusThaw did not start: \(readText(work + "/focus-thaw.log") ?? "")")
        }
        try waitForStates(except: thaw.last!.appID)

        let memory = try measureMemory()
        let thawResult = try measureThaw(thaw, anchor: anchor)
        let flush = try measureFlush(sub, home: thaw[0], subscriber: subscriber)
        let woken = try measureWake(wake, caller: caller, service: service)
        let busy = try measureBusy(frozen: busyFrozen, running: busyRunning)
        let idle = try measureIdle()
        let after = settledResident(bus.notifybusdPID)
        Report(run: self, memory: memory, residentAfter: after, thaw: thawResult, flush: flush, wake: woken, busy: busy, idle: idle).print()
    }

    /// Every app of the daemon's `app/**` keys is `frozen`, or `foreground` for `focused`
    /// (waits up to 15 s).
    private func waitForStates(except focused: String?) throws(BenchError) {
        guard let bus else { return }
        var states: [String: String] = [:]
        for _ in 0..<300 {
            bus.portal.serve()
            states = try lifecycleStates()
            let apps = tree?.scopes.count ?? 0
            if states.count >= apps, states.allSatisfy({ $0.value == ($0.key == focused ? "foreground" : "frozen") }) { return }
            usleep(50_000)
        }
        throw BenchError("the apps did not settle (all frozen but \(focused ?? "none")): \(states)\n\(bus.daemonLog.suffix(3000))")
    }

    /// The `state` of every `app/<id>/lifecycle` key.
    func lifecycleStates() throws(BenchError) -> [String: String] {
        guard let bus else { return [:] }
        var states: [String: String] = [:]
        for (key, text) in try bus.snapshot(["app/**"]) {
            let parts = key.split(separator: "/")
            guard parts.count == 3, let value = try? JSONValue(parsing: text), let state = value["state"]?.stringValue else { continue }
            states[String(parts[1])] = state
        }
        return states
    }

    func waitForState(_ appID: String, _ state: String, timeoutSeconds: Int = 15) throws(BenchError) {
        guard let bus else { return }
        for _ in 0..<(timeoutSeconds * 100) {
            bus.portal.serve()
            if try lifecycleStates()[appID] == state { return }
            usleep(10_000)
        }
        throw BenchError("\(appID) did not turn \(state) within \(timeoutSeconds) s\n\(bus.daemonLog.suffix(3000))")
    }

    // MARK: 1. Focus → thawed

    struct ThawResult {
        var daemon: [Int64] = []
        var anchor: [Int64] = []
        var elapsed: Int64 = 0
    }

    /// Round robin over the thaw apps (an odd number of them, so that each app's visits alternate
    /// between the daemon's kind and the anchor's): each step focuses the next app, which the
    /// daemon froze (daemon steps) or the benchmark froze itself by writing its `cgroup.freeze`
    /// as soon as it went to the background (anchor steps: the daemon leaves a cgroup frozen by
    /// someone else alone, and FocusThaw, armed with its app id and `cgroup.freeze`, writes 0).
    /// Measured: the benchmark's clock before it writes sway's `focus` command → the inotify
    /// event after which the app's `cgroup.events` reads `frozen 0`.
    private func measureThaw(_ apps: [Sway.Window], anchor: ChildProcess) throws(BenchError) -> ThawResult {
        guard let sway, let bus else { return ThawResult() }
        Self.progress("focus → thawed: \(rounds) rounds each, notifybusd and FocusThaw alternating")
        let watch = try EventsWatch()
        for app in apps { try watch.watch(app.scope.events) }
        let count = apps.count
        let warmup = count
        var result = ThawResult()
        let started = monotonicNanoseconds()
        var focused = count - 1
        func isAnchorStep(_ step: Int) -> Bool { step >= warmup && (step - warmup) % 2 == 1 }
        for step in 0..<(warmup + 2 * rounds) {
            let index = step % count
            let target = apps[index]
            let anchorStep = isAnchorStep(step)
            if step >= warmup {
                if anchorStep {
                    guard target.scope.isFrozen else { throw BenchError("\(target.appID) is not frozen before its anchor step") }
                    anchor.send("arm \(target.appID) \(target.scope.directory)/cgroup.freeze")
                    guard anchor.readLine(timeout: .milliseconds(5000)) == "armed" else { throw BenchError("FocusThaw did not arm") }
                } else {
                    var waited = 0
                    while !(target.scope.isFrozen && target.scope.freezeBit), waited < 15_000 {
                        bus.portal.serve()
                        usleep(5_000)
                        waited += 5
                    }
                    guard waited < 15_000 else {
                        throw BenchError("notifybusd did not freeze \(target.appID) within 15 s\n\(bus.daemonLog.suffix(3000))")
                    }
                    try waitForState(target.appID, "frozen")
                    usleep(100_000)  // the daemon has published `frozen` and is idle again
                }
            }
            watch.drain()
            let sent = monotonicNanoseconds()
            try sway.sendFocus(target)
            let thawed = watch.wait(for: "frozen 0", in: target.scope.events)
            let reply = String(decoding: try sway.ipc.receive().payload, as: UTF8.self)
            guard reply.contains("true") else { throw BenchError("sway refused to focus \(target.appID): \(reply)") }
            if step >= warmup {
                guard let thawed else {
                    throw BenchError("\(target.appID) was not thawed within 5 s of its focus (\(anchorStep ? "FocusThaw" : "notifybusd"))\n"
                        + (anchorStep ? readText(work + "/focus-thaw.log") ?? "" : String(bus.daemonLog.suffix(3000))))
                }
                if anchorStep {
                    guard anchor.readLine(timeout: .milliseconds(5000)) == "thawed" else { throw BenchError("FocusThaw did not report its write") }
                    result.anchor.append(thawed - sent)
                } else {
                    result.daemon.append(thawed - sent)
                }
            }
            // The app that left the foreground: frozen by the benchmark now if its next visit is an anchor step.
            let previous = apps[focused]
            focused = index
            let visit = nextVisit(of: previous, after: step, apps: apps)
            if previous.appID != target.appID, visit < warmup + 2 * rounds, isAnchorStep(visit) {
                try previous.scope.freezeAndWait()
            }
            usleep(150_000)
            bus.portal.serve()
        }
        result.elapsed = monotonicNanoseconds() - started
        return result
    }

    /// The step at which `app` is focused next after `step`, in the round robin over `apps`.
    private func nextVisit(of app: Sway.Window, after step: Int, apps: [Sway.Window]) -> Int {
        let index = apps.firstIndex { $0.appID == app.appID } ?? 0
        var next = step + 1
        while next % apps.count != index { next += 1 }
        return next
    }

    // MARK: 2. Focus → every current value

    struct FlushResult {
        var frozenTimes: [Int64] = []
        var frozenMessages: [Int64] = []
        var frozenNotifications: [Int64] = []
        var runningTimes: [Int64] = []
        var runningMessages: [Int64] = []
        var runningNotifications: [Int64] = []
        var changes = 0
    }

    /// Alternating rounds on the app `org.bench.Sub` (a foot window and a subscriber of
    /// `settings/flush/**` in its scope): frozen (sent to the background, frozen by the daemon,
    /// 10 keys × 100 changes, then focused: focus → the subscriber holds every last value) and
    /// running (focused throughout: the first change sent → the subscriber holds every last value).
    private func measureFlush(_ app: Sway.Window, home: Sway.Window, subscriber: ChildProcess) throws(BenchError) -> FlushResult {
        guard let sway, let bus else { return FlushResult() }
        Self.progress("focus → every current value: \(flushRounds) rounds frozen, \(flushRounds) running")
        let changesPerKey = 100
        var result = FlushResult()
        result.changes = Self.keys * changesPerKey
        try sway.focus(app)
        try waitForState(app.appID, "foreground")
        func burst(_ base: Int64) {
            for index in 0..<result.changes {
                bus.portal.change(namespace: "flush", key: "k\(index % Self.keys)", value: base + Int64(index))
            }
            bus.portal.flush()
        }
        func done() throws(BenchError) -> (time: Int64, messages: Int64, notifications: Int64) {
            guard let line = subscriber.readLine(timeout: .seconds(30), meanwhile: bus.portal.serve) else {
                throw BenchError("the subscriber did not catch up within 30 s")
            }
            let words = line.split(separator: " ").dropFirst().compactMap { Int64($0) }
            guard line.hasPrefix("done "), words.count == 3 else { throw BenchError("unexpected line from the subscriber: \(line)") }
            return (words[0], words[1], words[2])
        }
        for round in 0..<(2 * flushRounds) {
            let base = Int64(round + 1) * 1_000_000
            let threshold = base + Int64(result.changes - Self.keys)
            let last = Dictionary(uniqueKeysWithValues: (0..<Self.keys).map { ("k\($0)", base + Int64(result.changes - Self.keys + $0)) })
            subscriber.send("expect \(threshold)")
            usleep(20_000)
            if round % 2 == 0 {
                try sway.focus(home)
                try waitForState(app.appID, "frozen")
                burst(base)
                try bus.waitUntilDaemonHas(namespace: "flush", last)
                usleep(50_000)
                let focused = monotonicNanoseconds()
                try sway.focus(app)
                let (time, messages, notifications) = try done()
                result.frozenTimes.append(time - focused)
                result.frozenMessages.append(messages)
                result.frozenNotifications.append(notifications)
            } else {
                let sent = monotonicNanoseconds()
                burst(base)
                let (time, messages, notifications) = try done()
                result.runningTimes.append(time - sent)
                result.runningMessages.append(messages)
                result.runningNotifications.append(notifications)
                try bus.waitUntilDaemonHas(namespace: "flush", last)
            }
            usleep(200_000)
        }
        return result
    }

    // MARK: 3. A busy app in the background

    struct BusyResult {
        var frozen: (cpuMilliseconds: Int64, voluntary: Int64, involuntary: Int64) = (0, 0, 0)
        var running: (cpuMilliseconds: Int64, voluntary: Int64, involuntary: Int64) = (0, 0, 0)
        var frozenProcesses = 0
        var runningProcesses = 0
        var stayedFrozen = false
        var events = 0
        var seconds: Double = 0
    }

    /// Two identical busy apps (a foot window printing the date every 50 ms, and a subscriber of
    /// `settings/busy/**` in the same scope), over the same window of `busySeconds` with 10
    /// changes a second: A in the background, frozen by the daemon; B focused.
    private func measureBusy(frozen: Sway.Window, running: Sway.Window) throws(BenchError) -> BusyResult {
        guard let sway, let bus else { return BusyResult() }
        Self.progress("a busy app: \(busySeconds) s frozen vs running")
        try sway.focus(frozen)
        try waitForState(frozen.appID, "foreground")
        sleep(1)
        try sway.focus(running)
        try waitForState(frozen.appID, "frozen")
        var result = BusyResult()
        let beforeFrozen = ScopeUsage(frozen.scope), beforeRunning = ScopeUsage(running.scope)
        let started = monotonicNanoseconds()
        let end = started + Int64(busySeconds) * 1_000_000_000
        var next = started
        var stayedFrozen = true
        while next < end {
            bus.portal.change(namespace: "busy", key: "k\(result.events % Self.keys)", value: Int64(result.events + 1))
            bus.portal.flush()
            result.events += 1
            if result.events % 10 == 0, !frozen.scope.isFrozen { stayedFrozen = false }
            next += 100_000_000
            while monotonicNanoseconds() < next {
                bus.portal.serve()
                usleep(UInt32(max(1_000, min(20_000, (next - monotonicNanoseconds()) / 1000))))
            }
        }
        let afterFrozen = ScopeUsage(frozen.scope), afterRunning = ScopeUsage(running.scope)
        result.seconds = Double(monotonicNanoseconds() - started) / 1e9
        result.frozen = afterFrozen.since(beforeFrozen)
        result.running = afterRunning.since(beforeRunning)
        result.frozenProcesses = afterFrozen.cpuTime.count
        result.runningProcesses = afterRunning.cpuTime.count
        result.stayedFrozen = stayedFrozen && frozen.scope.isFrozen
        return result
    }

    // MARK: 4. The daemon idle with the policy on

    struct IdleResult {
        var threads: [(name: String, id: Int32, voluntary: Int64, involuntary: Int64)] = []
        var states: [String: String] = [:]
    }

    /// Nothing changes and no freeze is pending (every app frozen, but the focused one, so the
    /// monitor for messages to frozen apps is open, and none is woken): notifybusd's context
    /// switches per thread over `idleSeconds`, after 4 s of settling.
    private func measureIdle() throws(BenchError) -> IdleResult {
        guard let bus else { return IdleResult() }
        Self.progress("notifybusd idle with the policy on: \(idleSeconds) s")
        try waitForStates(except: "org.bench.BusyB")
        let running = (tree?.scopes ?? []).filter { !$0.isFrozen }.map(\.name)
        guard running == ["app-bench-org.bench.BusyB-1.scope"] else { throw BenchError("not frozen before the idle window: \(running)") }
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
        result.states = try lifecycleStates()
        return result
    }

    static func switches(of pid: pid_t) -> [Int32: (name: String, voluntary: Int64, involuntary: Int64)] {
        var threads: [Int32: (name: String, voluntary: Int64, involuntary: Int64)] = [:]
        for thread in ProcessStats.threads(of: pid) {
            threads[thread.id] = (thread.name, thread.voluntarySwitches, thread.involuntarySwitches)
        }
        return threads
    }

    // MARK: Memory

    struct MemoryResult {
        var policy: Int64 = 0
        var plain: Int64 = 0
    }

    /// Settled `VmRSS` of the daemon with the policy on (its windows known, the background apps
    /// frozen, 3 subscribers) vs the same binary without `--freeze-background`, same sources
    /// otherwise (`settings`), on a bus of its own with the same portal values and 3 subscribers.
    private func measureMemory() throws(BenchError) -> MemoryResult {
        guard let bus, let tree else { return MemoryResult() }
        Self.progress("memory: notifybusd with and without --freeze-background")
        let plain = try Bus(directory: work + "/bus-plain", settings: [
            "flush": Dictionary(uniqueKeysWithValues: (0..<Self.keys).map { ("k\($0)", Int64(0)) }),
            "busy": Dictionary(uniqueKeysWithValues: (0..<Self.keys).map { ("k\($0)", Int64(0)) }),
        ])
        defer { plain.stop() }
        // A runtime directory of its own: any notifybusd thaws, at its start, the cgroups listed
        // in the state file of its XDG_RUNTIME_DIR, which would undo the other daemon's freezes.
        let runtime = work + "/runtime-plain"
        let frozenBefore = tree.scopes.filter { $0.isFrozen }.map(\.name)
        guard mkdir(runtime, 0o700) == 0 else { throw BenchError("mkdir \(runtime)") }
        try plain.startDaemon(notifybusd, ["--source", "settings"], environment: ["XDG_RUNTIME_DIR": runtime])
        var holders: [ChildProcess] = []
        defer { holders.forEach { $0.terminate() } }
        for (index, namespace) in ["busy", "busy", "flush"].enumerated() {
            holders.append(try plain.subscriber(executable, name: "plain-\(index)", cgroup: tree.top + "/bench", ["--namespace", namespace]))
        }
        sleep(2)
        let result = MemoryResult(policy: settledResident(bus.notifybusdPID), plain: settledResident(plain.notifybusdPID))
        let frozenAfter = tree.scopes.filter { $0.isFrozen }.map(\.name)
        guard frozenAfter == frozenBefore else {
            throw BenchError("the freezes changed while the anchor daemon started: \(frozenBefore) → \(frozenAfter)")
        }
        return result
    }

    /// The least `VmRSS` of 5 readings over 250 ms, in KiB.
    func settledResident(_ pid: pid_t) -> Int64 {
        var least = Int64.max
        for _ in 0..<5 {
            least = min(least, ProcessStats.statusKiB("VmRSS", of: pid))
            usleep(50_000)
        }
        return least
    }

    // MARK: Cleaning up

    /// notifybusd stopped first (SIGTERM: it thaws what it froze), every scope thawed, every
    /// child killed, sway stopped, the tree removed.
    private func cleanUp() {
        bus?.notifybusd?.terminate()
        for scope in tree?.scopes ?? [] { try? scope.setFreeze(false) }
        for child in children { child.terminate(signal: SIGKILL) }
        children = []
        sway?.stop()
        bus?.stop()
        tree?.remove()
        sway = nil
        bus = nil
        tree = nil
    }
}

func writeFile(_ path: String, _ text: String) throws(BenchError) {
    guard let file = fopen(path, "w") else { throw BenchError("cannot write \(path)") }
    fputs(text, file)
    fclose(file)
}
