import NotifyBus
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `notifybusd --freeze-background` on a private session bus against a headless compositor
/// (`HeadlessSway` unless another is given), with its windows in app scopes of a private cgroup
/// tree (the daemon's cgroup root), its state file in a runtime directory of the test's own, and
/// `notifywatch --daemon 'app/**'` reading the lifecycle keys.
final class LifecycleBed<Compositor: HeadlessCompositor> {
    let compositor: Compositor
    let scopes: AppScopes
    let runtime: String
    let config: String
    private(set) var daemon: DaemonBed?
    private(set) var watcher: ChildProcess?
    private var scopeCount = 0

    /// The bed on `compositor` (made once the scopes are), without the daemon: start it with
    /// `start(_:)`.
    init(compositor: () async throws -> Compositor) async throws {
        scopes = try SwayBedEnvironment.appScopes()
        self.compositor = try await compositor()
        runtime = try makeTemporaryDirectory("lifecycle-runtime")
        config = runtime + "/lifecycle.conf"
        try writeFile(config, "cgroup-root = \(scopes.root)\n")
    }

    /// The state file's path.
    var stateFile: String { runtime + "/notifybus/frozen" }

    /// The cgroups the state file lists.
    var listed: [String] { (readFile(stateFile) ?? "").split(separator: "\n").map(String.init) }

    /// A window of `appID` in an app scope of its own (`app-test-<appID>-N.scope`), or in `scope`.
    @discardableResult
    func open(_ appID: String, in scope: AppScopes.Scope? = nil) async throws -> (window: Compositor.Window, scope: AppScopes.Scope) {
        let target: AppScopes.Scope
        if let scope {
            target = scope
        } else {
            scopeCount += 1
            target = try scopes.makeScope(name: "app-test-\(appID)-\(scopeCount).scope")
        }
        return (try await compositor.openWindow(appID: appID, inCgroup: target.directory, timeout: patience), target)
    }

    /// Starts notifybusd with `--freeze-background --toplevels BACKEND --freeze-config CONFIG` and
    /// `arguments`, and a watcher of `app/**` and the lifecycle source.
    func start(_ arguments: [String] = ["--freeze-delay", "2"], backend: String = "sway", environment: [String: String?] = [:]) async throws {
        var extra: [String: String?] = [
            "XDG_RUNTIME_DIR": runtime, "SWAYSOCK": compositor.environment["SWAYSOCK"], "WAYLAND_DISPLAY": compositor.displayPath,
        ]
        extra.merge(environment) { _, new in new }
        let daemon = try await DaemonBed(
            arguments: ["--source", "lifecycle", "--freeze-background", "--toplevels", backend, "--freeze-config", config] + arguments,
            environment: extra)
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
        scopes.remove()
        removeTree(runtime)
    }
}

extension LifecycleBed where Compositor == HeadlessSway {
    /// The bed on a headless sway.
    convenience init() async throws {
        try await self.init { try await HeadlessSway() }
    }

    /// The headless sway.
    var sway: HeadlessSway { compositor }
}
