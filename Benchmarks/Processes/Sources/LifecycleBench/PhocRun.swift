import BenchSupport
import Harness

#if canImport(Glibc)
import Glibc
#endif

/// `LifecycleBench phoc`: part 6, focus → thawed on a headless phoc 0.24 (Phosh's compositor; the
/// tests' `HeadlessPhoc`) with foot windows in app scopes of a private cgroup tree, and
/// `notifybusd --freeze-background --toplevels wlr`; apps switched with `activate(seat)` through
/// the bed's Wayland client, as Phosh's overview does. Against `WaylandTestClient
/// --freeze-on-activate APP_ID CGROUP_DIR`, a bare C client of the same protocol that writes the
/// app's `cgroup.freeze` itself (1 when none of its toplevels is activated, 0 when one is), in the
/// same run, the two turn about as in part 1 (`ThawRounds`).
final class PhocRun {
    let notifybusd: String
    let testClient: String
    let work: String
    let treeName: String
    let rounds: Int
    static let apps = 5

    init(arguments: Arguments) throws {
        notifybusd = arguments.string("notifybusd", default: "notifybusd")
        testClient = arguments.string("test-client", default: "WaylandTestClient")
        guard let work = arguments.optional("work") else { throw HarnessError("--work DIR is needed") }
        self.work = work
        treeName = arguments.string("tree", default: "nb-lifebench-phoc-\(getpid())")
        rounds = max(2, arguments.integer("rounds", default: 50))
    }

    func run() async throws {
        let tree = try LifecycleRun.makeTree(treeName)
        defer { tree.remove() }
        let phoc = try await HeadlessPhoc(testClient: testClient, timeout: .seconds(20))
        defer { phoc.stop() }
        let bed = try BenchBed(settings: [:])
        defer { bed.stop() }
        LifecycleRun.progress("phoc: opening the windows")
        var apps: [App] = []
        for index in 0..<Self.apps {
            let appID = "org.bench.Phoc\(index)"
            let scope = try tree.makeScope(name: "app-bench-\(appID)-1.scope")
            try await phoc.openWindow(appID: appID, inCgroup: scope.directory, timeout: .seconds(20))
            apps.append(App(appID: appID, scope: scope))
        }
        defer { for app in apps { try? app.scope.setFrozen(false) } }
        LifecycleRun.progress("phoc: starting notifybusd --freeze-background --toplevels wlr")
        let runtime = work + "/runtime-phoc"
        guard mkdir(runtime, 0o700) == 0 else { throw HarnessError("mkdir \(runtime)") }
        let config = work + "/lifecycle-phoc.conf"
        try writeFile(config, "cgroup-root = \(tree.root)\n")
        try bed.startDaemon(notifybusd, [
            "--source", "lifecycle", "--freeze-background", "--toplevels", "wlr", "--freeze-config", config, "--freeze-delay", "2",
        ], environment: ["XDG_RUNTIME_DIR": runtime, "WAYLAND_DISPLAY": phoc.displayPath])
        defer { bed.notifybusd?.terminate() }
        try bed.waitForStates(apps: apps.count, except: apps.last?.appID)
        LifecycleRun.progress("phoc: focus → thawed: \(rounds) rounds each, notifybusd and WaylandTestClient --freeze-on-activate alternating")
        let driver = PhocFocus(client: try phoc.testClient(), executable: testClient, environment: phoc.environment, work: work)
        defer { driver.stop() }
        let thawed = try ThawRounds.measure(apps, rounds: rounds, bed: bed, driver: driver)
        try thawed.write(
            part: "lifecycle-6-phoc-focus-thaw",
            title: "6. Focus → the app's cgroup thawed on phoc 0.24: `activate(seat)` sent by the bed's Wayland client (as Phosh's overview) "
                + "→ inotify on the app scope's `cgroup.events`, which then reads `frozen 0`; on the same \(Self.apps) windows",
            daemonRow: "notifybusd `--freeze-background --toplevels wlr`",
            anchorRow: "`WaylandTestClient --freeze-on-activate`, bare C: `activated` → `write(cgroup.freeze, \"0\")`",
            anchorName: "WaylandTestClient")
    }
}

/// Focus on phoc through the bed's client (`activate APP_ID`); the anchor, a `WaylandTestClient
/// --freeze-on-activate APP_ID CGROUP_DIR` started as the app leaves the foreground (it freezes the
/// app at once, none of its toplevels being activated) and ended once it has thawed it.
final class PhocFocus: FocusDriver {
    let client: WaylandTestClientProcess
    let executable: String
    let environment: [String: String]
    let work: String
    private var anchors: [String: ChildProcess] = [:]

    init(client: WaylandTestClientProcess, executable: String, environment: [String: String], work: String) {
        self.client = client
        self.executable = executable
        self.environment = environment
        self.work = work
    }

    func sendFocus(_ app: App) throws { try client.send(WaylandTestClientProcess.activateCommand(appID: app.appID, timeout: .seconds(5))) }

    func focusAnswered(_ app: App) throws { try client.answer(to: "activate \(app.appID)") }

    func prepareAnchor(for app: App) throws {
        let anchor = try ChildProcess(
            executable: executable, arguments: ["--freeze-on-activate", app.appID, app.scope.directory],
            environment: environment.merging(["PATH": "/usr/bin:/bin"]) { mine, _ in mine }, standardError: .append(log))
        anchors[app.appID] = anchor
        guard let line = anchor.readLine(timeout: .seconds(10)), line.hasSuffix(" 1") else {
            throw HarnessError("WaylandTestClient --freeze-on-activate did not freeze \(app.appID): \(anchorLog)")
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while !app.scope.isFrozen, ContinuousClock.now < deadline { usleep(1000) }
        guard app.scope.isFrozen else { throw HarnessError("\(app.appID) did not freeze within 5 s of the anchor's write") }
    }

    func armAnchor(for app: App) throws {
        guard anchors[app.appID] != nil else { throw HarnessError("no anchor for \(app.appID)") }
    }

    func anchorThawed(_ app: App) throws {
        guard let anchor = anchors.removeValue(forKey: app.appID) else { throw HarnessError("no anchor for \(app.appID)") }
        defer { anchor.terminate() }
        guard let line = anchor.readLine(timeout: .seconds(5)), line.hasSuffix(" 0") else {
            throw HarnessError("WaylandTestClient --freeze-on-activate did not report its thaw of \(app.appID): \(anchorLog)")
        }
    }

    private var log: String { work + "/freeze-on-activate.log" }

    var anchorLog: String { readFile(log) ?? "" }

    /// Ends the anchors still running (each thaws what it froze).
    func stop() {
        for anchor in anchors.values { anchor.terminate() }
        anchors = [:]
    }
}
