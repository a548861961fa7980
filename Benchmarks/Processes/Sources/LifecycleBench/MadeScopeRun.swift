import BenchSupport
import Harness
import NotifyBus

#if canImport(Glibc)
import Glibc
#endif

/// `LifecycleBench made`: part 7, app units made where there are none: with a real systemd user
/// manager (the tests' `SystemdUserManager`) and `notifybusd --freeze-background --toplevels sway`
/// on its session bus (`cgroup-root` its `app.slice`, `app-units = make`, the default), `apps`
/// foot windows opened one after the other in a cgroup that is no app unit (a session's, as a
/// terminal or a launcher that makes no unit leaves them): the time from the window's first
/// appearance (sway's `window` event `new`, read by the benchmark on an IPC connection of its
/// own) to its process in `app-notifybus-<app-id>-<pid>.scope` (its `/proc/PID/cgroup`, read every
/// millisecond). The anchor, turn about in the same run: the benchmark's own `StartTransientUnit`
/// of a process in the same cgroup (what notifybusd calls) → the process in that scope.
final class MadeScopeRun {
    let notifybusd: String
    let work: String
    let treeName: String
    let apps: Int

    init(arguments: Arguments) throws {
        notifybusd = arguments.string("notifybusd", default: "notifybusd")
        guard let work = arguments.optional("work") else { throw HarnessError("--work DIR is needed") }
        self.work = work
        treeName = arguments.string("tree", default: "nb-lifebench-made-\(getpid())")
        apps = max(2, arguments.integer("apps", default: 20))
    }

    func run() async throws {
        let tree = try LifecycleRun.makeTree(treeName)
        defer { tree.remove() }
        guard let mount = Cgroup2.mount() else { throw HarnessError("no cgroup2 mount in /proc/self/mountinfo") }
        let manager = try await SystemdUserManager(mountPoint: mount.mountPoint, mountRoot: mount.root, timeout: .seconds(30))
        defer { manager.stop() }
        let sway = try await HeadlessSway(configuration: ["workspace_layout tabbed"])
        defer { sway.stop() }
        let bed = try BenchBed(bus: try manager.sessionBus(), settings: [:])
        defer { bed.stop() }
        let session = try tree.makeScope(name: "session-2.scope")
        let runtime = work + "/runtime-made"
        guard mkdir(runtime, 0o700) == 0 else { throw HarnessError("mkdir \(runtime)") }
        let config = work + "/lifecycle-made.conf"
        try writeFile(config, "cgroup-root = \(manager.appSlice)\n")
        LifecycleRun.progress("made scopes: starting notifybusd on the user manager's bus")
        try bed.startDaemon(notifybusd, [
            "--source", "lifecycle", "--freeze-background", "--toplevels", "sway", "--freeze-config", config, "--freeze-delay", "60",
        ], environment: ["XDG_RUNTIME_DIR": runtime, "SWAYSOCK": sway.ipcSocket, "WAYLAND_DISPLAY": sway.displayPath])
        defer { bed.notifybusd?.terminate() }
        let events = try sway.connectIPC()
        _ = try events.call(SwayIPC.subscribe, "[\"window\"]")
        LifecycleRun.progress("made scopes: \(apps) windows in no app unit, each against a StartTransientUnit of the benchmark's own")
        var made = Samples(), anchor = Samples()
        let started = monotonicNanoseconds()
        for index in 0..<apps {
            made.append(try await measureWindow("org.bench.Made\(index)", in: session, sway: sway, events: events, manager: manager))
            anchor.append(try await measureAnchor(index, in: session, manager: manager))
        }
        try write(made: made, anchor: anchor, elapsed: monotonicNanoseconds() - started)
    }

    /// A foot window of `appID` as nobody in `session`: its `new` event → its process in the scope
    /// notifybusd made for it; then the window closed.
    private func measureWindow(
        _ appID: String, in session: AppScopes.Scope, sway: HeadlessSway, events: SwayIPC, manager: SystemdUserManager
    ) async throws -> Int64 {
        let (command, environment) = sway.windowCommand(appID: appID)
        let launch = ["/bin/sh", "-c", "echo $$ > '\(session.directory)/cgroup.procs' && exec \"$@\"", "sh",
                      "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + command
        let process = try ChildProcess(
            executable: launch[0], arguments: Array(launch.dropFirst()), environment: environment,
            standardInput: .nullDevice, standardOutput: .nullDevice, standardError: .append(work + "/made-\(appID).log"))
        let target = manager.appSlice + "/app-notifybus-\(appID)-\(process.pid).scope"
        var appeared: Int64?, moved: Int64?
        let deadline = monotonicNanoseconds() + 20_000_000_000
        while moved == nil || appeared == nil, monotonicNanoseconds() < deadline {
            var poller = pollfd(fd: events.descriptor, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, 1) > 0 {
                let (type, payload) = try events.receive()
                if type == 0x8000_0003, let event = try? JSONValue(parsing: payload), event["change"]?.stringValue == "new",
                   event["container"]?["pid"]?.doubleValue.map({ Int32($0) }) == process.pid
                {
                    appeared = monotonicNanoseconds()
                }
            }
            if moved == nil, Self.group(of: process.pid) == target { moved = monotonicNanoseconds() }
        }
        try await sway.adoptWindow(appID: appID, process: process, timeout: .seconds(20))
        try await sway.close(appID: appID, timeout: .seconds(20))
        guard let appeared, let moved else {
            throw HarnessError("\(appID)'s process \(appeared == nil ? "showed no window" : "was not moved into \(target)") within 20 s\n"
                + managerLog(manager))
        }
        return moved - appeared
    }

    /// A process in `session` moved by the benchmark's own `StartTransientUnit`: the call → the
    /// process in the scope; then the process killed (its scope is collected).
    private func measureAnchor(_ index: Int, in session: AppScopes.Scope, manager: SystemdUserManager) async throws -> Int64 {
        let process = try ChildProcess(
            executable: "/bin/sh", arguments: ["-c", "echo $$ > '\(session.directory)/cgroup.procs' && exec /bin/sleep 3600"],
            standardInput: .nullDevice, standardOutput: .nullDevice, standardError: .nullDevice)
        defer { process.terminate(signal: SIGKILL) }
        let unit = "app-bench-anchor-\(index).scope"
        let target = manager.appSlice + "/" + unit
        let inSession = session.group
        guard await eventually(timeout: .seconds(5), { Self.group(of: process.pid) == inSession }) else {
            throw HarnessError("the anchor's process did not join \(inSession)")
        }
        let sent = monotonicNanoseconds()
        _ = try await manager.startTransientScope(unit, pids: [process.pid])
        let deadline = sent + 20_000_000_000
        while Self.group(of: process.pid) != target {
            guard monotonicNanoseconds() < deadline else { throw HarnessError("StartTransientUnit did not move the process into \(unit)") }
            usleep(1000)
        }
        return monotonicNanoseconds() - sent
    }

    /// The `0::` group of `pid`.
    static func group(of pid: pid_t) -> String? {
        (readFile("/proc/\(pid)/cgroup") ?? "").split(separator: "\n").first { $0.hasPrefix("0::") }.map { String($0.dropFirst(3)) }
    }

    private func managerLog(_ manager: SystemdUserManager) -> String {
        String((readFile(manager.log) ?? "").suffix(2000))
    }

    private func write(made: Samples, anchor: Samples, elapsed: Int64) throws {
        var report = ReportPart("lifecycle-7-made-scopes")
        report.line("7. App units made where there are none: a foot window opened in a session's cgroup (no app unit), with a real systemd 252 "
            + "user manager and notifybusd on its bus (`app-units = make`): sway's `window` event `new` → the window's process in "
            + "`app-notifybus-<app-id>-<pid>.scope`; \(made.count) windows, each followed by the anchor (\(Figure.decimal(Double(elapsed) / 1e9, places: 1)) s)")
        report.line()
        report.samplesHeader("moved by", count: "apps")
        report.row("notifybusd: the window's first appearance → its process in the scope it made", made) { Figure.milliseconds($0) }
        report.row("the benchmark's own `StartTransientUnit` sent → the process in the scope (anchor)", anchor) { Figure.milliseconds($0) }
        report.line()
        report.line("notifybusd − anchor: p50 +\(Figure.milliseconds(made.p50 - anchor.p50)), p99 +\(Figure.milliseconds(made.p99 - anchor.p99)) "
            + "(no goal: what an app runs outside its scope after its window shows).")
        try report.finish()
    }
}
