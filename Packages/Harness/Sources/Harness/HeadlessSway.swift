public import NotifyBus
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A headless sway (wlroots' headless backend, pixman renderer, one 800x600 output) with real
/// `foot` windows, for the app-lifecycle tests.
///
/// sway refuses to run as root, so it runs as `nobody`, in a runtime directory of its own (mode
/// 0700, owned by `nobody`) that holds its IPC socket, its Wayland socket, its config and its log.
/// Root (the test) can connect to both sockets. Windows are `foot --app-id=… -- sleep 600` as
/// `nobody`, started in a cgroup of the test's choosing (an app scope of `AppScopes`).
///
/// `stop()` (or dropping the object) kills every window and sway, waits for each, and removes
/// the runtime directory.
public final class HeadlessSway: Sendable {
    /// The directory sway runs in (its `XDG_RUNTIME_DIR`): sockets, config, logs.
    public let runtimeDirectory: String
    /// sway's IPC socket (`<runtimeDirectory>/sway-ipc.<uid>.<pid>.sock`): its `SWAYSOCK`.
    public let ipcSocket: String
    /// The Wayland socket's name in the runtime directory (`wayland-1`): its `WAYLAND_DISPLAY`.
    public let waylandDisplay: String
    /// What a client of this sway needs: `XDG_RUNTIME_DIR`, `WAYLAND_DISPLAY`, `SWAYSOCK`.
    public let environment: [String: String]
    /// sway's log (standard output and error), in the runtime directory.
    public let log: String

    private let process: ChildProcess
    private let windows = Mutex<[Window]>([])
    private let stopped = Mutex(false)

    /// The user sway and its windows run as.
    static let user = (uid: uid_t(65534), gid: gid_t(65534))

    /// sway's process ID.
    public var pid: Int32 { process.pid }

    /// Starts sway, its configuration the bed's (one 800x600 output, no Xwayland) and then the
    /// lines of `configuration` (`workspace_layout tabbed`: one window shown at a time, as on a
    /// phone), and waits (up to `timeout`) until its IPC socket answers.
    /// - Throws: `HarnessError` when sway or foot is missing, or sway does not come up (the
    ///   error quotes its log).
    public init(configuration: [String] = [], timeout: Duration = patience) async throws {
        try requirePrograms(["/usr/bin/sway", "/usr/bin/swaymsg", "/usr/bin/foot", "/usr/bin/setpriv"])
        let directory = try makeRuntimeDirectory("notifybus-sway", owner: Self.user)
        let config = directory + "/sway.conf"
        let log = directory + "/sway.log"
        let process: ChildProcess
        do {
            try writeFile(config, (["output HEADLESS-1 resolution 800x600", "xwayland disable"] + configuration).joined(separator: "\n") + "\n")
            process = try ChildProcess(
                "/usr/bin/setpriv",
                Self.asUser + ["/usr/bin/sway", "-c", config],
                environment: [
                    "PATH": "/usr/bin:/bin", "HOME": directory, "XDG_RUNTIME_DIR": directory, "WLR_BACKENDS": "headless",
                    "WLR_RENDERER": "pixman", "WLR_LIBINPUT_NO_DEVICES": "1", "WLR_HEADLESS_OUTPUTS": "1",
                ],
                log: log)
        } catch {
            removeTree(directory)
            throw error
        }
        let socket = "\(directory)/sway-ipc.\(Self.user.uid).\(process.pid).sock"
        runtimeDirectory = directory
        ipcSocket = socket
        waylandDisplay = "wayland-1"
        environment = ["XDG_RUNTIME_DIR": directory, "WAYLAND_DISPLAY": "wayland-1", "SWAYSOCK": socket]
        self.log = log
        self.process = process
        let answered = await eventually(timeout: timeout) {
            guard !process.hasExited, access(socket, F_OK) == 0, access(directory + "/wayland-1", F_OK) == 0 else {
                return process.hasExited
            }
            return (try? await self.swaymsg(["-t", "get_version"])) != nil
        }
        guard answered, !process.hasExited else {
            let text = readFile(log) ?? ""
            stop()
            throw HarnessError("sway did not come up: \(text.suffix(2000))")
        }
    }

    deinit { stop() }

    /// `setpriv`'s arguments for running as `nobody`.
    private static var asUser: [String] {
        ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups"]
    }

    // MARK: Windows

    /// Opens a `foot` window with the app id `appID` (running `sleep 600`), first moving its
    /// process into the cgroup whose directory is `cgroupDirectory` when one is given; waits
    /// (up to `timeout`) until sway lists it.
    /// - Throws: `HarnessError` when foot cannot be started or its window does not show.
    @discardableResult
    public func openWindow(appID: String, inCgroup cgroupDirectory: String? = nil, timeout: Duration = patience) async throws
        -> Window
    {
        try await openWindow(appID: appID, inCgroup: cgroupDirectory, running: ["/bin/sleep", "600"], timeout: timeout)
    }

    /// Opens a `foot` window with the app id `appID` running `command`, as `openWindow(appID:inCgroup:timeout:)`.
    @discardableResult
    public func openWindow(
        appID: String, inCgroup cgroupDirectory: String? = nil, running command: [String], timeout: Duration = patience
    ) async throws -> Window {
        let command = ["/usr/bin/setpriv"] + Self.asUser + ["/usr/bin/foot", "--app-id=\(appID)", "--"] + command
        let launch = cgroupDirectory.map { directory in
            ["/bin/sh", "-c", "echo $$ > '\(directory)/cgroup.procs' && exec \"$@\"", "sh"] + command
        } ?? command
        let process = try ChildProcess(
            launch[0], Array(launch.dropFirst()),
            environment: [
                "PATH": "/usr/bin:/bin", "HOME": runtimeDirectory, "XDG_RUNTIME_DIR": runtimeDirectory,
                "WAYLAND_DISPLAY": waylandDisplay,
            ],
            log: runtimeDirectory + "/foot-\(appID).log")
        var window = Window(appID: appID, pid: process.pid, id: 0, process: process)
        windows.withLock { $0.append(window) }
        var found: View?
        let shown = await eventually(timeout: timeout) {
            if process.hasExited { return true }
            found = try? await views().first { $0.pid == process.pid }
            return found != nil
        }
        guard shown, let found else {
            try? await close(appID: appID)
            throw HarnessError("foot --app-id=\(appID) showed no window: \(readFile(runtimeDirectory + "/foot-\(appID).log") ?? "")")
        }
        window.id = found.id
        return window
    }

    /// Starts a real GApplication (`Fixtures/gtk_app.py`: a `Gtk.Application` whose id, bus name
    /// and window's app id are `appID`) as `nobody` on the session bus of `environment`, first
    /// moving it into the cgroup whose directory is `cgroupDirectory` when one is given; its
    /// `activate` after the first raises its window here (`swaymsg … focus`). Waits (up to
    /// `timeout`) until sway lists its window. Its standard output is the app's lines
    /// (`<ns> activated`, `<ns> action ping`, …), read with `window.process.readLine`.
    /// - Throws: `HarnessError` when it cannot be started or its window does not show.
    @discardableResult
    public func openApplication(
        appID: String, inCgroup cgroupDirectory: String? = nil, environment extra: [String: String],
        timeout: Duration = patience
    ) async throws -> Window {
        let raise = ["/usr/bin/swaymsg", "-s", ipcSocket, "[app_id=\"\(appID)\"] focus"]
        let command = ["/usr/bin/setpriv"] + Self.asUser + ["/usr/bin/python3", HarnessFiles.fixtures + "/gtk_app.py", appID, "--raise"] + raise
        let launch = cgroupDirectory.map { directory in
            ["/bin/sh", "-c", "echo $$ > '\(directory)/cgroup.procs' && exec \"$@\"", "sh"] + command
        } ?? command
        let log = runtimeDirectory + "/app-\(appID).log"
        var environment = [
            "PATH": "/usr/bin:/bin", "HOME": runtimeDirectory, "XDG_RUNTIME_DIR": runtimeDirectory,
            "WAYLAND_DISPLAY": waylandDisplay, "GDK_BACKEND": "wayland", "NO_AT_BRIDGE": "1", "PYTHONDONTWRITEBYTECODE": "1",
        ]
        environment.merge(extra) { _, new in new }
        let process = try ChildProcess(
            executable: launch[0], arguments: Array(launch.dropFirst()), environment: environment, standardError: .append(log))
        var window = Window(appID: appID, pid: process.pid, id: 0, process: process)
        windows.withLock { $0.append(window) }
        var found: View?
        let shown = await eventually(timeout: timeout) {
            if process.hasExited { return true }
            found = try? await views().first { $0.appID == appID && $0.pid == process.pid }
            return found != nil
        }
        guard shown, let found else {
            try? await close(appID: appID)
            throw HarnessError("the GApplication \(appID) showed no window: \(readFile(log) ?? "")")
        }
        window.id = found.id
        return window
    }

    /// The command and environment of a `foot` window of `appID` (running `sleep 600`), for a
    /// launcher of the caller's to start as `nobody` (`systemd-run --user --scope`); then
    /// `adoptWindow(appID:process:)`.
    public func windowCommand(appID: String) -> (command: [String], environment: [String: String]) {
        (["/usr/bin/foot", "--app-id=\(appID)", "--", "/bin/sleep", "600"],
         ["PATH": "/usr/bin:/bin", "HOME": runtimeDirectory, "XDG_RUNTIME_DIR": runtimeDirectory, "WAYLAND_DISPLAY": waylandDisplay])
    }

    /// Takes the window of `process` (started by another launcher) as one of this sway's: waits
    /// (up to `timeout`) until sway lists a view of it, and kills it with the others.
    @discardableResult
    public func adoptWindow(appID: String, process: ChildProcess, timeout: Duration = patience) async throws -> Window {
        var window = Window(appID: appID, pid: process.pid, id: 0, process: process)
        windows.withLock { $0.append(window) }
        var found: View?
        let shown = await eventually(timeout: timeout) {
            if process.hasExited { return true }
            found = try? await views().first { $0.pid == process.pid }
            return found != nil
        }
        guard shown, let found else { throw HarnessError("\(appID)'s process \(process.pid) showed no window") }
        window.id = found.id
        return window
    }

    /// Focuses the (first) window of `appID`, bringing it back from the scratchpad if it is there.
    public func focus(appID: String) async throws {
        try await command("[con_id=\(try await containerID(of: appID))] focus")
    }

    /// Hides the (first) window of `appID` in the scratchpad.
    public func hide(appID: String) async throws {
        try await command("[con_id=\(try await containerID(of: appID))] move scratchpad")
    }

    /// Kills the windows of `appID` (SIGKILL, so that a window in a frozen cgroup dies too),
    /// waits for each foot to exit, then (up to `timeout`) until sway no longer lists them.
    public func close(appID: String, timeout: Duration = patience) async throws {
        let closing = windows.withLock { windows in
            let closing = windows.filter { $0.appID == appID }
            windows.removeAll { $0.appID == appID }
            return closing
        }
        for window in closing { window.process.terminate(signal: SIGKILL) }
        let pids = Set(closing.map(\.pid))
        let gone = await eventually(timeout: timeout) {
            (try? await views().allSatisfy { !pids.contains($0.pid ?? -1) }) ?? false
        }
        guard gone else { throw HarnessError("sway still lists the window of \(appID)") }
    }

    /// The container id of the first view of `appID` that sway lists.
    private func containerID(of appID: String) async throws -> UInt64 {
        guard let view = try await views().first(where: { $0.appID == appID }) else {
            throw HarnessError("sway lists no window of \(appID)")
        }
        return view.id
    }

    // MARK: IPC

    /// A connection of the caller's own to sway's IPC socket, for commands it times itself.
    public func connectIPC() throws -> SwayIPC {
        try SwayIPC(socket: ipcSocket)
    }

    /// Runs the sway command `command` (`swaymsg -s <socket> -- command`) and returns its output.
    /// - Throws: `HarnessError` when swaymsg fails or sway reports the command failed.
    @discardableResult
    public func command(_ command: String) async throws -> String {
        let output = try await swaymsg(["--", command])
        guard !output.contains("\"success\": false") else { throw HarnessError("sway refused \(command): \(output)") }
        return output
    }

    /// sway's tree (`GET_TREE`), parsed.
    public func tree() async throws -> JSONValue {
        let output = try await swaymsg(["-r", "-t", "get_tree"])
        do {
            return try JSONValue(parsing: output)
        } catch {
            throw HarnessError("get_tree: \(error): \(output.prefix(500))")
        }
    }

    /// Every view (a node with an app id or a PID) in sway's tree, in tree order.
    public func views() async throws -> [View] {
        var views: [View] = []
        func walk(_ node: JSONValue, inScratchpad: Bool) {
            let scratch = inScratchpad || node["name"]?.stringValue == "__i3_scratch"
            if let id = node["id"]?.doubleValue, node["type"]?.stringValue == "con" || node["type"]?.stringValue == "floating_con",
                node["pid"] != nil || node["app_id"] != nil
            {
                views.append(View(
                    id: UInt64(id), appID: node["app_id"]?.stringValue, pid: node["pid"]?.doubleValue.map { Int32($0) },
                    focused: node["focused"]?.boolValue ?? false, inScratchpad: scratch))
            }
            for member in ["nodes", "floating_nodes"] {
                if case .array(let children)? = node[member] {
                    for child in children { walk(child, inScratchpad: scratch) }
                }
            }
        }
        walk(try await tree(), inScratchpad: false)
        return views
    }

    /// swaymsg with `arguments` on this sway's socket; its output.
    private func swaymsg(_ arguments: [String]) async throws -> String {
        try await runCommand("/usr/bin/swaymsg", ["-s", ipcSocket] + arguments, environment: ["PATH": "/usr/bin:/bin"])
    }

    // MARK: Stopping

    /// Kills every window (SIGKILL) and sway (SIGTERM, then SIGKILL), waits for each, and
    /// removes the runtime directory. Calling it again does nothing.
    public func stop() {
        guard stopped.withLock({ stopped in defer { stopped = true }; return !stopped }) else { return }
        let open = windows.withLock { windows in defer { windows = [] }; return windows }
        for window in open { window.process.terminate(signal: SIGKILL) }
        process.terminate(signal: SIGTERM, timeout: .seconds(5))
        removeTree(runtimeDirectory)
    }
}

extension HeadlessSway {
    /// A window `openWindow` opened: its foot process.
    public struct Window: Sendable {
        /// The app id it was opened with.
        public var appID: String
        /// foot's PID (sway's `pid` of the view).
        public var pid: Int32
        /// sway's container id of the view.
        public var id: UInt64
        /// Its process.
        public let process: ChildProcess
    }

    /// A view in sway's tree, as `views()` reads it.
    public struct View: Sendable, Hashable {
        /// The container id.
        public var id: UInt64
        /// Its `app_id` (`nil` for an Xwayland view).
        public var appID: String?
        /// The PID of its client.
        public var pid: Int32?
        /// Whether it has the focus.
        public var focused: Bool
        /// Whether it lies under the scratchpad (`__i3_scratch`), i.e. is hidden.
        public var inScratchpad: Bool
    }
}
