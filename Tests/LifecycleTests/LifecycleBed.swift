import NotifyBus
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `notifybusd --freeze-background` on a private session bus against a headless compositor
/// (`HeadlessSway` unless another is given), with its windows in app scopes of a private cgroup
/// tree (the daemon's cgroup root), its state file in a runtime directory of the test's own, and
/// `notifywatch --daemon 'app/**'` reading the lifecycle keys. With a real systemd user manager,
/// the manager starts the apps in its scopes and the daemon serves on the manager's bus.
final class LifecycleBed<Compositor: HeadlessCompositor>: CompositorBed {
    let compositor: Compositor
    /// The daemon's `--toplevels` unless a start says another.
    let backend: String
    let scopes: AppScopes
    let runtime: String
    let config: String
    /// The real systemd user manager whose app scopes the apps are in, and whose session bus the
    /// daemon serves on, when the bed has one.
    let manager: SystemdUserManager?
    private(set) var daemon: DaemonBed?
    private(set) var watcher: ChildProcess?
    private var scopeCount = 0

    /// The bed on `compositor` (made once the scopes are), without the daemon: start it with
    /// `start(_:)`. With `manager`, a real systemd user manager starts the apps in its scopes
    /// (`systemd-run --user --scope`, as launchers do), and the daemon serves on the manager's
    /// session bus with its `app.slice` as the cgroup root.
    init(compositor: () async throws -> Compositor, backend: String = "sway", manager withManager: Bool = false) async throws {
        self.backend = backend
        scopes = try SwayBedEnvironment.appScopes()
        manager = withManager ? try await SystemdBedEnvironment.manager() : nil
        self.compositor = try await compositor()
        runtime = try makeTemporaryDirectory("lifecycle-runtime")
        config = runtime + "/lifecycle.conf"
        try writeFile(config, "cgroup-root = \(manager?.appSlice ?? scopes.root)\n")
    }

    /// The state file's path.
    var stateFile: String { runtime + "/notifybus/frozen" }

    /// The cgroups the state file lists.
    var listed: [String] { (readFile(stateFile) ?? "").split(separator: "\n").map(String.init) }

    /// A window of `appID` in an app scope of its own (`app-test-<appID>-N.scope`; the manager's,
    /// when the bed has one), or in `scope`.
    @discardableResult
    func open(_ appID: String, in scope: AppScopes.Scope? = nil) async throws -> (window: Compositor.Window, scope: AppScopes.Scope) {
        if let manager, scope == nil {
            guard let launched = compositor as? any ScopeLaunchedWindows else {
                throw HarnessError("\(Compositor.self)'s windows cannot be started by the user manager")
            }
            let (command, environment) = launched.windowCommand(appID: appID)
            let scoped = try await manager.startInScope(appID: appID, command: command, environment: environment, user: .nobody)
            let window = try await launched.adoptWindow(appID: appID, process: scoped.process, timeout: patience)
            guard let window = window as? Compositor.Window else { throw HarnessError("a window of another compositor") }
            return (window, scoped.scope)
        }
        let target = try scope ?? nextScope(appID)
        return (try await compositor.openWindow(appID: appID, inCgroup: target.directory, timeout: patience), target)
    }

    /// `command` on the daemon's session bus, started inside `scope` (a process of the app).
    func launch(_ command: [String], in scope: AppScopes.Scope?, log name: String) throws -> ChildProcess {
        guard let daemon else { throw HarnessError("start the daemon first") }
        let launch = scope.map { scope in
            ["/bin/sh", "-c", "echo $$ > '\(scope.directory)/cgroup.procs' && exec \"$@\"", "sh"] + command
        } ?? command
        return try ChildProcess(
            executable: launch[0], arguments: Array(launch.dropFirst()),
            environment: daemon.session.environment(extra: ["PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"]),
            standardError: .append(runtime + "/\(name).log"))
    }

    func nextScope(_ appID: String) throws -> AppScopes.Scope {
        scopeCount += 1
        return try scopes.makeScope(name: "app-test-\(appID)-\(scopeCount).scope")
    }

    /// Starts notifybusd with `--freeze-background --toplevels BACKEND --freeze-config CONFIG` and
    /// `arguments`, and a watcher of `app/**` and the lifecycle source; `sessionConfiguration` is
    /// more policy of the session bus.
    func start(
        _ arguments: [String] = ["--freeze-delay", "2"], backend: String? = nil, environment: [String: String?] = [:],
        sessionConfiguration: String = ""
    ) async throws {
        let backend = backend ?? self.backend
        var extra: [String: String?] = [
            "XDG_RUNTIME_DIR": runtime, "SWAYSOCK": compositor.environment["SWAYSOCK"], "WAYLAND_DISPLAY": compositor.displayPath,
        ]
        extra.merge(environment) { _, new in new }
        let daemon = try await DaemonBed(
            arguments: ["--source", "lifecycle", "--freeze-background", "--toplevels", backend, "--freeze-config", config] + arguments,
            environment: extra, sessionConfiguration: sessionConfiguration, sessionBus: try manager?.sessionBus())
        self.daemon = daemon
        watcher = try daemon.notifywatch(["app/**"])
    }

    /// The watcher's lines until one for `appID`'s key has `state` (and `reason`, when given).
    func waitFor(_ appID: String, _ state: String, reason: String?? = nil, timeout: Duration = .seconds(20)) -> [JSONValue]? {
        guard let daemon, let watcher else { return nil }
        let key = "app/\(appID)/lifecycle"
        return daemon.lines(of: watcher, until: { line in
            guard line["key"]?.stringValue == key, line["value"]?["state"]?.stringValue == state else { return false }
            guard let reason else { return true }
            return line["value"]?["reason"]?.stringValue == reason
        }, timeout: timeout)
    }

    /// The watcher's next `source` line for `lifecycle`.
    func lifecycleSource(timeout: Duration = .seconds(20)) -> JSONValue? {
        guard let daemon, let watcher else { return nil }
        return daemon.lines(of: watcher, until: { $0["type"]?.stringValue == "source" && $0["source"]?.stringValue == "lifecycle" }, timeout: timeout)?.last
    }

    /// Stops the daemon with `signal` and returns its exit status.
    @discardableResult
    func stopDaemon(_ signal: Int32 = SIGTERM) -> Int32? {
        if let watcher { kill(watcher.pid, SIGTERM); _ = watcher.waitForExit(timeout: .seconds(5)) }
        watcher = nil
        let status = daemon?.daemon.terminate(signal: signal)
        daemon = nil
        return status.flatMap(ChildProcess.exitStatus(ofWaitStatus:))
    }

    /// Everything stopped, thawed and removed.
    func stop() {
        stopDaemon()
        compositor.stop()
        manager?.stop()
        scopes.remove()
        removeTree(runtime)
    }
}

extension LifecycleBed {
    var compositorPID: Int32 { compositor.pid }

    @discardableResult
    func openWindow(_ appID: String, in scope: AppScopes.Scope?) async throws -> AppScopes.Scope {
        try await open(appID, in: scope).scope
    }

    func focus(_ appID: String) async throws { try await compositor.focus(appID: appID) }

    func close(_ appID: String) async throws { try await compositor.close(appID: appID, timeout: patience) }

    func startDaemon(_ arguments: [String], backend: String?) async throws { try await start(arguments, backend: backend) }
}

extension LifecycleBed where Compositor == HeadlessSway {
    /// The bed on a headless sway (and a real systemd user manager with `manager`).
    convenience init(manager: Bool = false) async throws {
        try await self.init(compositor: { try await HeadlessSway() }, manager: manager)
    }

    /// The headless sway.
    var sway: HeadlessSway { compositor }

    /// A real GApplication of `appID` (`HeadlessSway.openApplication`) on the daemon's session bus,
    /// in an app scope of its own, or in `scope`; start the daemon first.
    @discardableResult
    func openApp(_ appID: String, in scope: AppScopes.Scope? = nil) async throws -> (window: HeadlessSway.Window, scope: AppScopes.Scope) {
        guard let daemon else { throw HarnessError("start the daemon before opening an app on its bus") }
        let target = try scope ?? nextScope(appID)
        let window = try await sway.openApplication(appID: appID, inCgroup: target.directory, environment: daemon.session.environment())
        return (window, target)
    }
}
