import DBus
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A headless KWin 5.27 (`kwin_wayland --virtual`, one 800x600 output) with real GTK 3 windows,
/// for the app-lifecycle tests of the kde window backend; shaped like `HeadlessSway`.
///
/// `/usr/bin/kwin_wayland` carries a file capability (`cap_sys_resource`) that this machine
/// refuses to execute, so a copy of it runs (a copy has none), in a runtime directory of its own
/// (its `XDG_RUNTIME_DIR` and `HOME`: the Wayland socket `kwin-test`, its configuration, KSycoca's
/// cache, logs) and on a session bus of its own (a `PrivateBus`). It runs as root, as the tests
/// and their notifybusd do: KWin trusts a client with `org_kde_plasma_window_management` only
/// after reading its `/proc/PID/exe`, which it can read only for its own user's processes (or as
/// root). The programs it trusts are the `trusting` executables: one desktop file each in a data
/// directory first on KWin's `XDG_DATA_DIRS` (`Exec=` the program's canonical path,
/// `X-KDE-Wayland-Interfaces=org_kde_plasma_window_management`); KWin's KSycoca reads them itself,
/// no `kbuildsycoca5` needed.
///
/// Windows are `Fixtures/gtk_window.py APP_ID` (foot crashes on KWin's virtual output), started in
/// a cgroup of the test's choosing; focus (and `skipTaskbar`) goes through KWin's scripting over
/// D-Bus (`org.kde.kwin.Scripting.loadScript`, then `org.kde.kwin.Script.run` on `/<id>`).
///
/// `stop()` (or dropping the object) kills every window and KWin, waits for each, stops the bus and
/// removes the runtime directory.
public final class HeadlessKWin: Sendable {
    /// The directory KWin runs in (its `XDG_RUNTIME_DIR` and `HOME`).
    public let runtimeDirectory: String
    /// The Wayland socket's name in the runtime directory (`kwin-test`).
    public let waylandDisplay: String
    /// KWin's session bus.
    public let bus: PrivateBus
    /// What a client of this KWin needs: `XDG_RUNTIME_DIR`, `WAYLAND_DISPLAY`,
    /// `DBUS_SESSION_BUS_ADDRESS`.
    public let environment: [String: String]
    /// KWin's log (standard output and error), in the runtime directory.
    public let log: String

    private let process: ChildProcess
    private let windows = Mutex<[Window]>([])
    /// What each window's process last said of its focus, by PID.
    private let focused = Mutex<[Int32: Bool]>([:])
    private let stopped = Mutex(false)
    private let scripts = Atomic(0)

    /// KWin's process ID.
    public var pid: Int32 { process.pid }

    /// The Wayland socket's absolute path (libwayland takes one as the display name).
    public var displayPath: String { runtimeDirectory + "/" + waylandDisplay }

    /// Whether KWin and the GTK bindings its windows need are installed.
    public static let isInstalled: Bool = {
        var names = utsname()
        uname(&names)
        let machine = withUnsafeBytes(of: names.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return access("/usr/bin/kwin_wayland", X_OK) == 0
            && access("/usr/lib/\(machine)-linux-gnu/girepository-1.0/Gtk-3.0.typelib", R_OK) == 0
    }()

    /// Starts KWin, trusting `trusting` (paths of executables) with
    /// `org_kde_plasma_window_management`, and waits (up to `timeout`) until its socket accepts
    /// and it owns `org.kde.KWin` on its bus.
    /// - Throws: `HarnessError` when KWin is missing or does not come up (the error quotes its log).
    public init(trusting executables: [String] = [], timeout: Duration = patience) async throws {
        guard Self.isInstalled else { throw HarnessError("kwin_wayland or GTK 3's typelib (gir1.2-gtk-3.0) is missing") }
        let directory = try makeTemporaryDirectory("notifybus-kwin")
        let log = directory + "/kwin.log"
        let bus: PrivateBus
        let process: ChildProcess
        do {
            guard chmod(directory, 0o700) == 0 else { throw HarnessError("chmod \(directory): errno \(errno)") }
            _ = try await runCommand("/bin/cp", ["/usr/bin/kwin_wayland", directory + "/kwin_wayland"], environment: [:])
            try Self.writeDesktopFiles(trusting: executables, in: directory + "/data/applications")
            bus = try PrivateBus(.session)
            process = try ChildProcess(
                directory + "/kwin_wayland",
                ["--virtual", "--no-lockscreen", "--no-global-shortcuts", "--socket", "kwin-test", "--width", "800", "--height", "600"],
                environment: [
                    "PATH": "/usr/bin:/bin", "HOME": directory, "XDG_RUNTIME_DIR": directory, "KWIN_COMPOSE": "Q",
                    "XDG_DATA_DIRS": directory + "/data:/usr/share", "DBUS_SESSION_BUS_ADDRESS": bus.address,
                ],
                log: log)
        } catch {
            removeTree(directory)
            throw error
        }
        runtimeDirectory = directory
        waylandDisplay = "kwin-test"
        self.bus = bus
        environment = ["XDG_RUNTIME_DIR": directory, "WAYLAND_DISPLAY": "kwin-test", "DBUS_SESSION_BUS_ADDRESS": bus.address]
        self.log = log
        self.process = process
        let socket = directory + "/kwin-test"
        let listening = await eventually(timeout: timeout) { process.hasExited || access(socket, F_OK) == 0 }
        var owned = false
        if listening && !process.hasExited {
            owned = (try? await bus.waitForOwner(of: "org.kde.KWin", timeout: timeout) { process.hasExited ? "KWin exited" : nil }) != nil
        }
        guard owned else {
            let text = readFile(log) ?? ""
            stop()
            throw HarnessError("KWin did not come up: \(text.suffix(2000))")
        }
    }

    deinit { stop() }

    /// One desktop file per executable, `Exec=` its canonical path, listing the interface.
    private static func writeDesktopFiles(trusting executables: [String], in directory: String) throws {
        for path in [directory.dropLast("/applications".count), Substring(directory)] {
            guard mkdir(String(path), 0o755) == 0 else { throw HarnessError("mkdir \(path): errno \(errno)") }
        }
        for (index, executable) in executables.enumerated() {
            guard let resolved = realpath(executable, nil) else { throw HarnessError("\(executable) does not exist") }
            defer { free(resolved) }
            try writeFile("\(directory)/org.notifybus.test-\(index).desktop", """
                [Desktop Entry]
                Type=Application
                Name=NotifyBus test \(index)
                Exec=\(String(cString: resolved))
                NoDisplay=true
                X-KDE-Wayland-Interfaces=org_kde_plasma_window_management

                """)
        }
    }

    // MARK: Windows

    /// Opens a GTK window with the app id `appID`, first moving its process into the cgroup whose
    /// directory is `cgroupDirectory` when one is given; waits (up to `timeout`) until KWin has
    /// handled its first frame and activated it (KWin activates every new window here).
    /// - Throws: `HarnessError` when the window does not show or is not activated.
    @discardableResult
    public func openWindow(appID: String, inCgroup cgroupDirectory: String? = nil, timeout: Duration = patience) async throws
        -> Window
    {
        let command = ["/usr/bin/python3", HarnessFiles.fixtures + "/gtk_window.py", appID]
        let launch = cgroupDirectory.map { directory in
            ["/bin/sh", "-c", "echo $$ > '\(directory)/cgroup.procs' && exec \"$@\"", "sh"] + command
        } ?? command
        let log = runtimeDirectory + "/window-\(appID).log"
        var variables = environment
        variables.merge(["PATH": "/usr/bin:/bin", "HOME": runtimeDirectory, "NO_AT_BRIDGE": "1", "GSETTINGS_BACKEND": "memory"]) { $1 }
        let process = try ChildProcess(
            executable: launch[0], arguments: Array(launch.dropFirst()), environment: variables, standardError: .append(log))
        let window = Window(appID: appID, pid: process.pid, process: process)
        windows.withLock { $0.append(window) }
        let line = process.readLine(timeout: timeout)
        guard line == "mapped" else {
            try? await close(appID: appID)
            throw HarnessError("the GTK window of \(appID) did not show: \(readFile(log) ?? "")")
        }
        guard isActive(window, within: timeout) else {
            try? await close(appID: appID)
            throw HarnessError("KWin did not activate the new window of \(appID)")
        }
        return window
    }

    /// Focuses the (first) window of `appID`: a KWin script that makes it the active window;
    /// then waits (up to `patience`) until the window says it is active.
    public func focus(appID: String) async throws {
        let window = try firstWindow(of: appID)
        try await run(script: "workspace.activeClient = window;", onWindowOf: window)
        guard isActive(window, within: patience) else { throw HarnessError("the window of \(appID) was not activated") }
    }

    /// Keeps the (first) window of `appID` off the task bar, or not (KWin's `skipTaskbar`, which
    /// it says of panels, the desktop and notifications): a KWin script.
    public func setSkipsTaskbar(appID: String, _ skips: Bool) async throws {
        try await run(script: "window.skipTaskbar = \(skips);", onWindowOf: try firstWindow(of: appID))
    }

    private func firstWindow(of appID: String) throws -> Window {
        guard let window = windows.withLock({ $0.first { $0.appID == appID } }) else {
            throw HarnessError("no window of \(appID) was opened")
        }
        return window
    }

    /// Runs `body` on KWin's window (`window`) of `target`'s process: a script loaded, run and
    /// unloaded over D-Bus (`loadScript`, `run` on `/<id>`, `unloadScript`); done when it returns.
    private func run(script body: String, onWindowOf target: Window) async throws {
        let name = "notifybus-\(scripts.add(1, ordering: .relaxed).newValue)"
        let file = runtimeDirectory + "/\(name).js"
        try writeFile(file, """
            for (const window of workspace.clientList()) {
                if (window.pid == \(target.pid)) { \(body) }
            }

            """)
        let client = try DBusClient(address: bus.dbusAddress)
        defer { Task { await client.close() } }
        try await client.waitUntilConnected()
        let loaded = try await client.call(
            destination: "org.kde.KWin", path: "/Scripting", interface: "org.kde.kwin.Scripting", member: "loadScript",
            arguments: [.string(file), .string(name)])
        guard case .int32(let id)? = loaded.first, id >= 0, let path = ObjectPath(rawValue: "/\(id)") else {
            throw HarnessError("KWin did not load \(file): \(loaded)")
        }
        _ = try await client.call(destination: "org.kde.KWin", path: path, interface: "org.kde.kwin.Script", member: "run")
        _ = try await client.call(
            destination: "org.kde.KWin", path: "/Scripting", interface: "org.kde.kwin.Scripting", member: "unloadScript",
            arguments: [.string(name)])
    }

    /// Whether `window` is active, reading what its process said since (and waiting up to
    /// `timeout` for it to say "active").
    private func isActive(_ window: Window, within timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        var active = focused.withLock { $0[window.pid] ?? false }
        while true {
            // Everything said so far; then, while not active, what comes next.
            let wait = active ? Duration.milliseconds(1) : max(deadline - ContinuousClock.now, .milliseconds(1))
            guard let line = window.process.readLine(timeout: wait) else { break }
            if line == "active" || line == "inactive" { active = line == "active" }
            if !active && ContinuousClock.now >= deadline { break }
        }
        focused.withLock { $0[window.pid] = active }
        return active
    }

    /// Kills the windows of `appID` (SIGKILL, so that a window in a frozen cgroup dies too) and
    /// waits for each to exit (KWin unmaps a window when its client's connection closes).
    public func close(appID: String, timeout: Duration = patience) async throws {
        let closing = windows.withLock { windows in
            let closing = windows.filter { $0.appID == appID }
            windows.removeAll { $0.appID == appID }
            return closing
        }
        for window in closing where window.process.terminate(signal: SIGKILL, timeout: timeout) == nil {
            throw HarnessError("the window of \(appID) (pid \(window.pid)) did not exit")
        }
    }

    // MARK: Stopping

    /// Kills every window (SIGKILL) and KWin (SIGTERM, then SIGKILL), waits for each, stops its
    /// bus and removes the runtime directory. Calling it again does nothing.
    public func stop() {
        guard stopped.withLock({ stopped in defer { stopped = true }; return !stopped }) else { return }
        let open = windows.withLock { windows in defer { windows = [] }; return windows }
        for window in open { window.process.terminate(signal: SIGKILL) }
        process.terminate(signal: SIGTERM, timeout: .seconds(5))
        bus.stop()
        removeTree(runtimeDirectory)
    }
}

extension HeadlessKWin {
    /// A window `openWindow` opened: its GTK process.
    public struct Window: Sendable {
        /// The app id it was opened with.
        public var appID: String
        /// The GTK process's PID (what KWin reports as the window's `pid`).
        public var pid: Int32
        let process: ChildProcess
    }
}
