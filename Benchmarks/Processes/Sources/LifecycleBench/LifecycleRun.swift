import BenchSupport
import Harness

#if canImport(Glibc)
import Glibc
#endif

/// `LifecycleBench run`: parts 1 to 5, on one headless sway (tabbed: one window shown at a time,
/// as on a phone) with foot windows in app scopes of a private cgroup tree, one private bus and
/// one `notifybusd --freeze-background --toplevels sway` (Benchmarks/lifecycle-bench.sh says what
/// each part measures). Each part's table on standard output and in Benchmarks/results, progress
/// on standard error.
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

    private(set) var tree: AppScopes?
    private(set) var scopes: [AppScopes.Scope] = []
    private(set) var sway: HeadlessSway?
    private(set) var ipc: SwayIPC?
    private(set) var bus: BenchBed?
    private var children: [ChildProcess] = []

    init(arguments: Arguments, executable: String) throws {
        notifybusd = arguments.string("notifybusd", default: "notifybusd")
        focusThaw = arguments.string("focus-thaw", default: "FocusThaw")
        self.executable = executable
        guard let work = arguments.optional("work") else { throw HarnessError("--work DIR is needed") }
        self.work = work
        treeName = arguments.string("tree", default: "nb-lifebench-\(getpid())")
        rounds = max(2, arguments.integer("rounds", default: 50))
        flushRounds = max(1, arguments.integer("flush-rounds", default: 5))
        busySeconds = max(1, arguments.integer("busy-seconds", default: 60))
        idleSeconds = max(1, arguments.integer("idle-seconds", default: 60))
        wakeRounds = max(2, arguments.integer("wake-rounds", default: 30))
    }

    static func progress(_ text: String) { BenchSupport.progress("LifecycleBench", text) }

    /// The run's tree (`<tree>/bench`, this process and all it starts but the apps, and the app
    /// scopes in `<tree>/user@0.service/app.slice`), made and joined.
    static func makeTree(_ name: String) throws -> AppScopes {
        guard let mount = Cgroup2.mount() else { throw HarnessError("no cgroup2 mount in /proc/self/mountinfo") }
        let tree = try AppScopes(mountPoint: mount.mountPoint, mountRoot: mount.root, name: name)
        try Cgroup2.move(into: try tree.makeGroup("bench"))
        return tree
    }

    func run() async throws {
        defer { cleanUp() }
        let tree = try Self.makeTree(treeName)
        self.tree = tree
        let sway = try await HeadlessSway(configuration: ["workspace_layout tabbed"])
        self.sway = sway
        let ipc = try sway.connectIPC()
        self.ipc = ipc
        let bus = try BenchBed(settings: [
            "flush": Dictionary(uniqueKeysWithValues: (0..<Self.keys).map { ("k\($0)", Int64(0)) }),
            "busy": Dictionary(uniqueKeysWithValues: (0..<Self.keys).map { ("k\($0)", Int64(0)) }),
        ])
        self.bus = bus

        Self.progress("opening the windows")
        let busyCommand = ["/bin/sh", "-c", "while :; do date; sleep 0.05; done"]
        let busyFrozen = try await open("org.bench.BusyA", running: busyCommand)
        let busyRunning = try await open("org.bench.BusyB", running: busyCommand)
        let sub = try await open("org.bench.Sub")
        let wake = try await open(Self.wakeApp)
        var thaw: [App] = []
        for index in 0..<Self.thawApps { thaw.append(try await open("org.bench.Thaw\(index)")) }

        Self.progress("starting notifybusd --freeze-background")
        let runtime = work + "/runtime"
        guard mkdir(runtime, 0o700) == 0 else { throw HarnessError("mkdir \(runtime)") }
        let config = work + "/lifecycle.conf"
        try writeFile(config, "cgroup-root = \(tree.root)\n")
        try bus.startDaemon(notifybusd, [
            "--source", "settings", "--source", "lifecycle", "--freeze-background", "--toplevels", "sway",
            "--freeze-config", config, "--freeze-delay", "\(delay)", "--freeze-wake-grace", "1",
        ], environment: ["XDG_RUNTIME_DIR": runtime, "SWAYSOCK": sway.ipcSocket, "WAYLAND_DISPLAY": sway.displayPath])
        for (name, app) in [("busy-a", busyFrozen), ("busy-b", busyRunning)] {
            children.append(try subscriber(name: name, in: app, ["--namespace", "busy"]))
        }
        let subscriber = try subscriber(name: "sub", in: sub, ["--namespace", "flush", "--report", "done", "--keys", "\(Self.keys)"])
        children.append(subscriber)
        let service = "org.notifybus.Bench.Wake"
        let responder = try bus.helper(
            [executable, "responder", "--address", bus.address, "--cgroup", wake.scope.directory, "--name", service],
            name: "responder", timeout: .seconds(30)).child
        children.append(responder)
        let caller = try RawConnection(address: bus.address)
        let anchor = try ChildProcess.start([focusThaw, sway.ipcSocket], standardError: work + "/focus-thaw.log")
        children.append(anchor)
        guard anchor.readLine(timeout: .seconds(10)) == "ready" else {
            throw HarnessError("FocusThaw did not start: \(readFile(work + "/focus-thaw.log") ?? "")")
        }
        try bus.waitForStates(apps: scopes.count, except: thaw.last?.appID)

        let memory = try measureMemory()
        Self.progress("focus → thawed: \(rounds) rounds each, notifybusd and FocusThaw alternating")
        let thawed = try ThawRounds.measure(
            thaw, rounds: rounds, bed: bus, driver: SwayFocus(ipc: ipc, anchor: anchor, log: work + "/focus-thaw.log"))
        try thawed.write(
            part: "lifecycle-1-focus-thaw",
            title: "1. Focus → the app's cgroup thawed: sway `[con_id=N] focus` written → inotify on the app scope's "
                + "`cgroup.events`, which then reads `frozen 0`; on the same \(Self.thawApps) windows",
            daemonRow: "notifybusd `--freeze-background --toplevels sway`",
            anchorRow: "FocusThaw, bare C: sway `window` event → `write(cgroup.freeze, \"0\")`", anchorName: "FocusThaw")
        try measureFlush(sub, home: thaw[0], subscriber: subscriber).write(keys: Self.keys)
        try measureWake(wake, caller: caller, service: service).write()
        try measureBusy(frozen: busyFrozen, running: busyRunning).write()
        let idle = try measureIdle()
        try writeIdle(idle, memory: memory, residentAfter: settledResident(bus.notifybusdPID))
    }

    /// A foot window of `appID` running `command` as nobody, in a new scope `app-bench-<appID>-1.scope`.
    private func open(_ appID: String, running command: [String] = ["/bin/sleep", "3600"]) async throws -> App {
        guard let tree, let sway else { throw HarnessError("no tree or compositor") }
        let scope = try tree.makeScope(name: "app-bench-\(appID)-1.scope")
        scopes.append(scope)
        let window = try await sway.openWindow(appID: appID, inCgroup: scope.directory, running: command, timeout: .seconds(20))
        return App(appID: appID, scope: scope, containerID: window.id)
    }

    /// `LifecycleBench subscriber --kind daemon` inside `app`'s scope, subscribed.
    private func subscriber(name: String, in app: App, _ options: [String]) throws -> ChildProcess {
        guard let bus else { throw HarnessError("no bus") }
        return try bus.subscriber(executable, kind: .daemon, name: name, ["--cgroup", app.scope.directory] + options).child
    }

    /// Focuses `app` through the run's own IPC connection and waits for sway's reply.
    func focus(_ app: App) throws {
        guard let ipc else { throw HarnessError("no compositor") }
        let reply = String(decoding: try ipc.call(SwayIPC.runCommand, "[con_id=\(app.containerID)] focus"), as: UTF8.self)
        guard reply.contains("\"success\": true") || reply.contains("\"success\":true") else {
            throw HarnessError("sway refused to focus \(app.appID): \(reply)")
        }
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

    /// notifybusd stopped first (SIGTERM: it thaws what it froze), every scope thawed, every
    /// child killed, sway stopped, the tree removed.
    private func cleanUp() {
        bus?.notifybusd?.terminate()
        for scope in scopes { try? scope.setFrozen(false) }
        for child in children { child.terminate(signal: SIGKILL) }
        children = []
        ipc = nil
        sway?.stop()
        bus?.stop()
        tree?.remove()
        sway = nil
        bus = nil
        tree = nil
    }
}

/// Focus on sway through the run's IPC connection; the anchor FocusThaw, armed with the app's
/// id and `cgroup.freeze` before the focus, after the benchmark froze the app itself.
struct SwayFocus: FocusDriver {
    let ipc: SwayIPC
    let anchor: ChildProcess
    let log: String

    func sendFocus(_ app: App) throws { try ipc.send(SwayIPC.runCommand, "[con_id=\(app.containerID)] focus") }

    func focusAnswered(_ app: App) throws {
        let reply = String(decoding: try ipc.receive().payload, as: UTF8.self)
        guard reply.contains("true") else { throw HarnessError("sway refused to focus \(app.appID): \(reply)") }
    }

    func prepareAnchor(for app: App) throws { try app.scope.freezeAndWait() }

    func armAnchor(for app: App) throws {
        anchor.send("arm \(app.appID) \(app.scope.directory)/cgroup.freeze")
        guard anchor.readLine(timeout: .milliseconds(5000)) == "armed" else { throw HarnessError("FocusThaw did not arm") }
    }

    func anchorThawed(_ app: App) throws {
        guard anchor.readLine(timeout: .milliseconds(5000)) == "thawed" else { throw HarnessError("FocusThaw did not report its write") }
    }

    var anchorLog: String { readFile(log) ?? "" }
}
