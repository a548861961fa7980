public import DBus
import Synchronization

#if canImport(Glibc)
public import Glibc
#endif

private let nextManagerNumber = Atomic<Int>(1)

/// A real systemd user manager (`/usr/lib/systemd/systemd --user`, Debian's systemd 252) with its
/// own session bus, for the app-lifecycle tests (Tests/README.md, "A real systemd user manager").
///
/// PID 1 here is not systemd, so the manager runs in a private mount namespace (`unshare --mount`,
/// root only) that fakes what it checks: `/run/systemd/system` (a tmpfs over `/run/systemd`), the
/// unified hierarchy (cgroup2 remounted on `/sys/fs/cgroup`) and freezer support (an empty
/// `init.scope` at the cgroup2 root, made only while the manager starts, only if missing, and
/// removed as soon as the manager runs). A user manager logs to `/dev/console`, so in the namespace
/// the pseudo-terminal of a `script` process is bound over it: the log is `log`.
///
/// The manager's cgroup is `nb-systemd-<pid>-<n>/user@<uid>.service` under the cgroup2 mount, which
/// it takes as its root: it moves itself to `init.scope` there and makes its units' groups below
/// (`app.slice/app-test-org.example.A-1.scope`). Its session bus is its own `dbus.socket` and
/// `dbus.service` (Debian's dbus-user-session) at `$XDG_RUNTIME_DIR/bus`: systemd 252 joins a
/// session bus only when those two units of its own run, so it never joins a bus of the test's.
///
/// Clients run outside the namespace with `environment`: `systemctl --user`, `systemd-run --user`
/// and D-Bus all reach the manager through the runtime directory. Only `is-system-running` must
/// run inside (`systemState()`): outside it says `offline`, as there is no `/run/systemd/system`.
///
/// `stop()` (or dropping the object) kills the processes started in scopes, stops the manager
/// (SIGTERM: it stops its units, the bus among them), kills whatever is left in its tree, waits
/// for every child, and removes the tree, the `init.scope` it made and the runtime directory.
public final class SystemdUserManager: Sendable {
    /// A systemd unit's `FreezerState`.
    public enum FreezerState: String, Sendable {
        case running, freezing, frozen, thawing
    }

    /// A user a command in a scope runs as (`setpriv --reuid --regid --clear-groups`).
    public struct User: Sendable, Hashable {
        public var uid: uid_t
        public var gid: gid_t
        public init(uid: uid_t, gid: gid_t) {
            self.uid = uid
            self.gid = gid
        }
        /// `nobody`/`nogroup`, whom the headless sway and its windows run as.
        public static let nobody = User(uid: 65534, gid: 65534)
    }

    /// A command started in an app scope of its own (`startInScope`).
    public struct ScopedProcess: Sendable {
        /// The scope's unit name (`app-test-org.example.A-1.scope`).
        public var unit: String
        /// The scope's cgroup.
        public var scope: AppScopes.Scope
        /// The command's process (systemd-run's, which execs the command).
        public let process: ChildProcess
        /// The command's PID.
        public var pid: pid_t { process.pid }
    }

    /// The programs the manager and its clients need.
    public static let programs = [
        "/usr/lib/systemd/systemd", "/usr/bin/systemctl", "/usr/bin/systemd-run", "/usr/bin/unshare", "/usr/bin/nsenter",
        "/usr/bin/script", "/usr/bin/setpriv", "/usr/bin/dbus-daemon",
    ]
    /// The session bus's socket unit (dbus-user-session).
    public static let busSocketUnit = "/usr/lib/systemd/user/dbus.socket"

    /// The manager's `XDG_RUNTIME_DIR` (mode 0700): its sockets, the bus's, the logs.
    public let runtimeDirectory: String
    /// The session bus: `unix:path=<runtimeDirectory>/bus`.
    public let busAddress: String
    /// What a client of the manager needs: `XDG_RUNTIME_DIR` and `DBUS_SESSION_BUS_ADDRESS`.
    public let environment: [String: String]
    /// The manager's log (its console, and its units' output).
    public let log: String
    /// Where the cgroup2 hierarchy is mounted (outside the namespace).
    public let mountPoint: String
    /// The manager's root group, as in the `0::` line of `/proc/PID/cgroup`
    /// (`/nb-systemd-123-1/user@0.service`).
    public let root: String
    /// Its `app.slice`, as in the `0::` line of `/proc/PID/cgroup`.
    public let appSlice: String
    /// The directory of `appSlice` under `mountPoint`.
    public let appSliceDirectory: String
    /// The private group above `root` (`/nb-systemd-123-1`), as in the `0::` line of `/proc/PID/cgroup`.
    public let topGroup: String
    /// The directory of `topGroup` under `mountPoint`.
    public let topDirectory: String
    /// The environment of the commands the harness runs outside the namespace.
    let commandEnvironment: [String: String]
    let state = Mutex(State())

    struct State {
        var script: ChildProcess?
        var managerPID: pid_t?
        var madeInitScope = false
        var madeTree = false
        var launched: [ChildProcess] = []
        var client: DBusClient?
        var nextScope = 1
        var stopped = false
    }

    /// The manager's PID (-1 before it started).
    public var pid: pid_t { state.withLock { $0.managerPID } ?? -1 }

    /// The session bus, for clients of the library.
    public var dbusAddress: DBusAddress { .address(busAddress) }

    /// Starts the manager in a private tree under the cgroup2 mount at `mountPoint` (which must
    /// show the hierarchy's root, where systemd looks for `init.scope`), waits (up to `timeout`)
    /// until `is-system-running` says `running` and it owns `org.freedesktop.systemd1` on its bus.
    /// `logLevel` is the manager's (`debug` logs every D-Bus message).
    /// - Throws: `HarnessError` when a program is missing, a group cannot be made, or the manager
    ///   does not come up (the error quotes its log).
    public init(mountPoint: String, mountRoot: String = "/", logLevel: String = "info", timeout: Duration = patience) async throws {
        try requirePrograms(Self.programs)
        guard access(Self.busSocketUnit, R_OK) == 0 else { throw HarnessError("\(Self.busSocketUnit) is missing (dbus-user-session)") }
        guard mountRoot == "/" else {
            throw HarnessError("the cgroup2 mount at \(mountPoint) shows \(mountRoot), not the root where systemd needs init.scope")
        }
        let directory = try makeTemporaryDirectory("notifybus-systemd")
        // Traversable, not readable, by others: the bus's socket is reached by windows and apps
        // that run as nobody.
        guard chmod(directory, 0o711) == 0 else {
            removeTree(directory)
            throw HarnessError("chmod \(directory): errno \(errno)")
        }
        let base = mountPoint.hasSuffix("/") ? String(mountPoint.dropLast()) : mountPoint
        let top = "/nb-systemd-\(getpid())-\(nextManagerNumber.wrappingAdd(1, ordering: .relaxed).oldValue)"
        runtimeDirectory = directory
        busAddress = "unix:path=\(directory)/bus"
        environment = ["XDG_RUNTIME_DIR": directory, "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(directory)/bus"]
        commandEnvironment = environment.merging(["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]) { $1 }
        log = directory + "/manager.log"
        self.mountPoint = base
        topGroup = top
        topDirectory = base + top
        root = top + "/user@\(getuid()).service"
        appSlice = root + "/app.slice"
        appSliceDirectory = base + appSlice
        do {
            try makeGroup(topDirectory)
            state.withLock { $0.madeTree = true }
            try makeGroup(base + root)
            try await startManager(logLevel: logLevel, timeout: timeout)
            try await waitForBus(timeout: timeout)
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    // MARK: Starting

    private func makeGroup(_ path: String) throws {
        guard mkdir(path, 0o755) == 0 else { throw HarnessError("mkdir \(path): errno \(errno)") }
    }

    /// Starts `script` running the namespace's shell, which execs the manager, and waits until the
    /// manager runs. The hierarchy's root is locked meanwhile (`flock` on its directory), so that
    /// two harnesses never race over `init.scope`; the one made here is removed before unlocking
    /// (systemd 252 checks for it once, at start).
    private func startManager(logLevel: String, timeout: Duration) async throws {
        try writeBusConfiguration()
        let shell = runtimeDirectory + "/manager.sh"
        try writeFile(shell, """
            #!/bin/sh
            # systemd --user in a private mount namespace (SystemdUserManager): /dev/console on
            # script's pseudo-terminal (the manager logs there), /run/systemd/system, cgroup2 on
            # /sys/fs/cgroup, and this shell (then the manager) in the manager's root group.
            set -e
            mount --bind "$(tty)" /dev/console
            if [ -d /run/systemd ]; then mount -t tmpfs tmpfs /run/systemd; else mount -t tmpfs tmpfs /run; mkdir /run/systemd; fi
            mkdir /run/systemd/system
            umount -l /sys/fs/cgroup
            mount -t cgroup2 none /sys/fs/cgroup
            echo $$ > '/sys/fs/cgroup\(root)/cgroup.procs'
            exec /usr/lib/systemd/systemd --user --log-target=console --log-level=\(logLevel) \\
              --default-standard-output=inherit --default-standard-error=inherit

            """)
        let lock = try await lockHierarchyRoot(timeout: timeout)
        defer {
            removeInitScope()
            close(lock)
        }
        if mkdir(mountPoint + "/init.scope", 0o755) == 0 {
            state.withLock { $0.madeInitScope = true }
        } else if errno != EEXIST {
            throw HarnessError("mkdir \(mountPoint)/init.scope: errno \(errno)")
        }
        let script = try ChildProcess(
            "/usr/bin/script",
            ["--quiet", "--flush", "--return", "--command", "exec /usr/bin/unshare --mount --propagation private /bin/sh \(shell)", "/dev/null"],
            environment: [
                "PATH": "/usr/bin:/bin", "HOME": runtimeDirectory, "LANG": "C.UTF-8", "SHELL": "/bin/sh",
                "XDG_RUNTIME_DIR": runtimeDirectory, "DBUS_SESSION_BUS_ADDRESS": busAddress,
            ],
            log: log)
        state.withLock { $0.script = script }
        var managerPID: pid_t?
        await eventually(timeout: timeout) {
            managerPID = Self.childPID(of: script.pid)
            return managerPID != nil || script.hasExited
        }
        guard let managerPID else { throw failure("script started no manager") }
        state.withLock { $0.managerPID = managerPID }
        var systemState = ""
        await eventually(timeout: timeout) {
            if script.hasExited { return true }
            systemState = await self.systemState()
            return ["running", "degraded", "maintenance", "stopping"].contains(systemState)
        }
        if let status = script.waitStatus { throw failure("it exited (wait status \(status))") }
        guard systemState == "running" else {
            let failed = (try? await systemctl(["--failed", "--no-legend"])) ?? ""
            throw failure("is-system-running says \(systemState.isEmpty ? "nothing" : systemState)\(failed.isEmpty ? "" : "; failed: \(failed)")")
        }
    }

    /// The session bus's configuration, as a drop-in of the manager's own `dbus.service`: the
    /// policy of `PrivateBus` (any user connects and owns names), so that apps running as nobody
    /// share it with notifybusd and the manager.
    private func writeBusConfiguration() throws {
        let configuration = runtimeDirectory + "/session-bus.conf"
        try writeFile(configuration, """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <keep_umask/>
              <!-- The socket is dbus.socket's, passed by the manager. -->
              <listen>systemd:</listen>
              <auth>EXTERNAL</auth>
            \(PrivateBus.openPolicy)
            </busconfig>
            """)
        let dropIns = runtimeDirectory + "/.config/systemd/user/dbus.service.d"
        for path in [runtimeDirectory + "/.config", runtimeDirectory + "/.config/systemd", runtimeDirectory + "/.config/systemd/user", dropIns] {
            guard mkdir(path, 0o755) == 0 || errno == EEXIST else { throw HarnessError("mkdir \(path): errno \(errno)") }
        }
        try writeFile(dropIns + "/notifybus-tests.conf", """
            [Service]
            ExecStart=
            ExecStart=/usr/bin/dbus-daemon --config-file=\(configuration) --address=systemd: --nofork --nopidfile --systemd-activation --syslog-only

            """)
    }

    /// The session bus as a `PrivateBus` the manager runs (never started nor stopped by it).
    public func sessionBus() throws -> PrivateBus {
        try PrivateBus(runBy: busAddress)
    }

    /// An exclusive `flock` on the cgroup2 mount's directory (waiting up to `timeout`); the
    /// descriptor to close.
    private func lockHierarchyRoot(timeout: Duration) async throws -> Int32 {
        let descriptor = open(mountPoint, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw HarnessError("open \(mountPoint): errno \(errno)") }
        let deadline = ContinuousClock.now + timeout
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard ContinuousClock.now < deadline else {
                close(descriptor)
                throw HarnessError("\(mountPoint) stayed locked (flock) for \(timeout)")
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return descriptor
    }

    /// Removes the `init.scope` made at the hierarchy's root, if it was made here.
    private func removeInitScope() {
        guard state.withLock({ state in defer { state.madeInitScope = false }; return state.madeInitScope }) else { return }
        for _ in 0..<200 {
            if rmdir(mountPoint + "/init.scope") == 0 || errno == ENOENT { return }
            usleep(10_000)
        }
    }

    /// Connects to the session bus (the first connection starts `dbus.service`) and waits until
    /// the manager owns `org.freedesktop.systemd1` there.
    private func waitForBus(timeout: Duration) async throws {
        let client = try DBusClient(address: dbusAddress)
        state.withLock { $0.client = client }
        try await client.waitUntilConnected(timeout: timeout)
        let owned = await eventually(timeout: timeout) {
            if state.withLock({ $0.script?.hasExited ?? true }) { return true }
            return (try? await client.call(
                destination: .bus, path: .bus, interface: .bus, member: "GetNameOwner",
                arguments: [.string(Self.busName.rawValue)])) != nil
        }
        guard owned, !state.withLock({ $0.script?.hasExited ?? true }) else {
            throw failure("\(Self.busName) got no owner on \(busAddress)")
        }
    }

    /// A `HarnessError` saying `what`, with the manager's log.
    func failure(_ what: String) -> HarnessError {
        let text = String(String.UnicodeScalarView((readFile(log) ?? "").unicodeScalars.filter { $0 != "\r" }))
        return HarnessError("systemd --user did not come up: \(what); its log:\n\(text.suffix(3000))")
    }

    // MARK: Stopping

    /// Kills the processes started in scopes (SIGKILL), thaws the manager's tree, stops the
    /// manager (SIGTERM; SIGKILL after 10 s), kills what is left in the tree (`cgroup.kill`),
    /// waits for every child, and removes the tree, the `init.scope` made here and the runtime
    /// directory. Calling it again does nothing.
    public func stop() {
        let taken = state.withLock { state -> State? in
            guard !state.stopped else { return nil }
            let taken = state
            state.stopped = true
            state.launched = []
            state.script = nil
            state.client = nil
            return taken
        }
        guard let taken else { return }
        for process in taken.launched { process.terminate(signal: SIGKILL) }
        let groups = taken.madeTree ? Self.groupDirectories(under: topDirectory) : []
        for group in groups { try? writeFile(group + "/cgroup.freeze", "0") }
        if let script = taken.script {
            // The manager is script's child: signalled only while script has not reaped it.
            let signalManager = { (signal: Int32) in
                if let pid = taken.managerPID, !script.hasExited, Self.parentPID(of: pid) == script.pid { kill(pid, signal) }
            }
            signalManager(SIGTERM)
            if script.waitForExit(timeout: .seconds(10)) == nil {
                signalManager(SIGKILL)
                script.terminate(signal: 0)
            }
        }
        if taken.madeTree {
            if Self.isPopulated(topDirectory) {
                try? writeFile(topDirectory + "/cgroup.kill", "1")
                let deadline = ContinuousClock.now + .seconds(5)
                while Self.isPopulated(topDirectory), ContinuousClock.now < deadline { usleep(10_000) }
            }
            for group in Self.groupDirectories(under: topDirectory) {
                for _ in 0..<200 {
                    if rmdir(group) == 0 || errno == ENOENT { break }
                    usleep(10_000)
                }
            }
        }
        removeInitScope()
        removeTree(runtimeDirectory)
    }

    // MARK: Processes and groups

    /// The `0::` group of `pid`, from `/proc/PID/cgroup`.
    static func group(ofProcess pid: pid_t) -> String? {
        (readFile("/proc/\(pid)/cgroup") ?? "").split(separator: "\n").first { $0.hasPrefix("0::") }.map { String($0.dropFirst(3)) }
    }

    /// The arguments of `pid` (`/proc/PID/cmdline`).
    static func arguments(of pid: pid_t) -> [String] {
        (readFile("/proc/\(pid)/cmdline") ?? "").split(separator: "\0").map(String.init)
    }

    /// The parent of `pid` (`/proc/PID/stat`).
    static func parentPID(of pid: pid_t) -> pid_t? {
        guard let stat = readFile("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 1 ? pid_t(fields[1]) : nil
    }

    /// The first child of `pid` (`/proc/PID/task/PID/children`).
    static func childPID(of pid: pid_t) -> pid_t? {
        (readFile("/proc/\(pid)/task/\(pid)/children") ?? "").split(separator: " ").first.flatMap { pid_t($0) }
    }

    /// Whether the group at `directory` or one below holds a process (`populated 1`).
    static func isPopulated(_ directory: String) -> Bool {
        (readFile(directory + "/cgroup.events") ?? "").split(separator: "\n").contains("populated 1")
    }

    /// `directory` and every group below it, deepest first.
    static func groupDirectories(under directory: String) -> [String] {
        guard let stream = opendir(directory) else { return [] }
        var children: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != ".", name != "..", entry.pointee.d_type == UInt8(DT_DIR) { children.append(directory + "/" + name) }
        }
        closedir(stream)
        return children.flatMap { groupDirectories(under: $0) } + [directory]
    }
}
