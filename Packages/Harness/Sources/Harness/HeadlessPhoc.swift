import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A headless phoc 0.24 (Phosh's compositor, the phones': wlroots' headless backend, pixman
/// renderer, one 720x1440 output at scale 2) with real `foot` windows and the tests' own Wayland
/// client, for the app-lifecycle tests; the same shape as `HeadlessSway`.
///
/// phoc runs as `nobody` (as a phone's user; it would run as root too), in a runtime directory of
/// its own (mode 0700, owned by `nobody`) that holds its Wayland socket, its config and the logs.
/// Root (the test) can connect to the socket. Headless, phoc makes its seat only when an input
/// device appears: the bed's client (`WaylandTestClientProcess`, as root) makes a virtual pointer
/// first, and focuses windows with `activate(seat)` as Phosh's overview does. Windows are
/// `foot --app-id=… -- sleep 600` as `nobody`, started in a cgroup of the test's choosing (an app
/// scope of `AppScopes`).
///
/// `killCompositor()` and `restart()` are a crash of phoc and a new phoc under the same socket
/// name. `stop()` (or dropping the object) kills every window, the client and phoc, waits for
/// each, and removes the runtime directory.
public final class HeadlessPhoc: Sendable {
    /// The directory phoc runs in (its `XDG_RUNTIME_DIR` and `HOME`): socket, config, logs.
    public let runtimeDirectory: String
    /// The Wayland socket's name in the runtime directory (`wayland-0`): its `WAYLAND_DISPLAY`.
    public let waylandDisplay: String
    /// What a client of this phoc needs: `XDG_RUNTIME_DIR`, `WAYLAND_DISPLAY`.
    public let environment: [String: String]
    /// phoc's log (standard output and error, of every phoc `restart()` started), in the
    /// runtime directory.
    public let log: String

    private struct Running: Sendable {
        var phoc: ChildProcess
        var client: WaylandTestClientProcess
    }

    private let config: String
    /// The bed's client program (`WaylandTestClient`).
    private let clientExecutable: String
    private let running: Mutex<Running?>
    private let windows = Mutex<[Window]>([])
    private let stopped = Mutex(false)

    /// The user phoc and its windows run as.
    static let user = (uid: uid_t(65534), gid: gid_t(65534))

    /// What phoc prints once its socket is made, before the socket's name and a quote.
    private static let announcement = "Running compositor on wayland display '"

    /// The running phoc's process ID (-1 after `killCompositor()` until `restart()`).
    public var pid: Int32 { running.withLock { $0?.phoc.pid ?? -1 } }

    /// The bed's client, connected to the running phoc.
    /// - Throws: `HarnessError` after `killCompositor()` until `restart()`.
    public func testClient() throws -> WaylandTestClientProcess {
        guard let client = running.withLock({ $0?.client }) else { throw HarnessError("phoc is not running") }
        return client
    }

    /// Starts phoc and waits (up to `timeout`) until its Wayland socket answers the bed's client,
    /// the program `testClient` (the root package's `WaylandTestClient`), which then has a seat.
    /// - Throws: `HarnessError` when phoc or foot is missing, or phoc does not come up (the error
    ///   quotes its log).
    public init(testClient: String, timeout: Duration = patience) async throws {
        try requirePrograms(["/usr/bin/phoc", "/usr/bin/foot", "/usr/bin/setpriv"])
        let directory = try makeRuntimeDirectory("notifybus-phoc", owner: Self.user)
        runtimeDirectory = directory
        config = directory + "/phoc.ini"
        log = directory + "/phoc.log"
        clientExecutable = testClient
        running = Mutex(nil)
        do {
            try writeFile(config, "[core]\nxwayland=false\n[output:HEADLESS-1]\nmode=720x1440\nscale=2\n")
            let started = try await Self.launch(
                directory: directory, config: config, log: log, client: testClient, timeout: timeout)
            waylandDisplay = started.display
            environment = ["XDG_RUNTIME_DIR": directory, "WAYLAND_DISPLAY": started.display]
            running.withLock { $0 = started.running }
        } catch {
            removeTree(directory)
            throw error
        }
    }

    deinit { stop() }

    /// `setpriv`'s arguments for running as `nobody`.
    private static var asUser: [String] {
        ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups"]
    }

    /// Starts phoc in `directory`, waits until it names its socket in `log`, and connects a client.
    private static func launch(
        directory: String, config: String, log: String, client executable: String, timeout: Duration
    ) async throws -> (running: Running, display: String) {
        let offset = readFile(log)?.utf8.count ?? 0
        let phoc = try ChildProcess(
            executable: "/usr/bin/setpriv", arguments: asUser + ["/usr/bin/phoc", "-C", config],
            environment: [
                "PATH": "/usr/bin:/bin", "HOME": directory, "XDG_RUNTIME_DIR": directory, "WLR_BACKENDS": "headless",
                "WLR_RENDERER": "pixman", "WLR_LIBINPUT_NO_DEVICES": "1", "GSETTINGS_BACKEND": "memory",
            ],
            workingDirectory: directory, standardInput: .nullDevice, standardOutput: .append(log),
            standardError: .standardOutput)
        func logged() -> String { String(decoding: (readFile(log) ?? "").utf8.dropFirst(offset), as: UTF8.self) }
        func display() -> String? {
            let text = logged()
            guard let start = text.firstRange(of: announcement)?.upperBound, let end = text[start...].firstIndex(of: "'") else {
                return nil
            }
            return String(text[start..<end])
        }
        let named = await eventually(timeout: timeout) { phoc.hasExited || display() != nil }
        guard named, !phoc.hasExited, let name = display() else {
            phoc.terminate(signal: SIGKILL)
            throw HarnessError("phoc did not come up: \(logged().suffix(2000))")
        }
        let client: WaylandTestClientProcess
        do {
            client = try WaylandTestClientProcess(
                executable: executable, environment: ["XDG_RUNTIME_DIR": directory, "WAYLAND_DISPLAY": name], log: directory + "/client.log",
                timeout: timeout)
        } catch {
            phoc.terminate(signal: SIGKILL)
            throw error
        }
        guard client.hasSeat else {
            client.stop()
            phoc.terminate(signal: SIGKILL)
            throw HarnessError("phoc made no seat for the client's virtual pointer: \(logged().suffix(2000))")
        }
        return (Running(phoc: phoc, client: client), name)
    }

    // MARK: Windows

    /// Opens a `foot` window with the app id `appID` (running `sleep 600`), first moving its
    /// process into the cgroup whose directory is `cgroupDirectory` when one is given; waits
    /// (up to `timeout`) until the bed's client lists one more toplevel of `appID`.
    /// - Throws: `HarnessError` when foot cannot be started or its window does not show.
    @discardableResult
    public func openWindow(appID: String, inCgroup cgroupDirectory: String? = nil, timeout: Duration = patience) async throws
        -> Window
    {
        let client = try testClient()
        let before = try client.toplevels().filter { $0.appID == appID }.count
        let command = ["/usr/bin/setpriv"] + Self.asUser + ["/usr/bin/foot", "--app-id=\(appID)", "--", "/bin/sleep", "600"]
        let launch = cgroupDirectory.map { directory in
            ["/bin/sh", "-c", "echo $$ > '\(directory)/cgroup.procs' && exec \"$@\"", "sh"] + command
        } ?? command
        let footLog = runtimeDirectory + "/foot-\(appID).log"
        let process = try ChildProcess(
            launch[0], Array(launch.dropFirst()),
            environment: [
                "PATH": "/usr/bin:/bin", "HOME": runtimeDirectory, "XDG_RUNTIME_DIR": runtimeDirectory,
                "WAYLAND_DISPLAY": waylandDisplay,
            ],
            log: footLog)
        let window = Window(appID: appID, pid: process.pid, process: process)
        windows.withLock { $0.append(window) }
        let shown = await eventually(timeout: timeout) {
            process.hasExited || ((try? client.toplevels().filter { $0.appID == appID }.count) ?? 0) > before
        }
        guard shown, !process.hasExited else {
            try? await close(appID: appID)
            throw HarnessError("foot --app-id=\(appID) showed no window: \(readFile(footLog) ?? "")")
        }
        return window
    }

    /// Focuses the (first) toplevel of `appID` with `activate(seat)` and waits (up to `timeout`)
    /// until phoc reports it activated. While `cover()`'s surface is mapped phoc ignores it (it
    /// throws), yet focuses that toplevel when the cover goes.
    public func focus(appID: String, timeout: Duration = patience) async throws {
        try testClient().activate(appID: appID, timeout: timeout)
    }

    /// Kills the windows of `appID` (SIGKILL, so that a window in a frozen cgroup dies too),
    /// waits for each foot to exit, then (up to `timeout`) until the client no longer lists them.
    public func close(appID: String, timeout: Duration = patience) async throws {
        let closing = windows.withLock { windows in
            let closing = windows.filter { $0.appID == appID }
            windows.removeAll { $0.appID == appID }
            return closing
        }
        for window in closing { window.process.terminate(signal: SIGKILL) }
        try testClient().waitUntilGone(appID: appID, timeout: timeout)
    }

    /// The toplevels phoc lists, in the order it announced them to the bed's client (a client
    /// that binds late gets the newest first).
    public func toplevels() async throws -> [Toplevel] {
        try testClient().toplevels()
    }

    /// Maps a full-output top-layer surface with exclusive keyboard interactivity, as Phosh's
    /// overview and lock screen do, and waits until phoc has deactivated every toplevel.
    public func cover() async throws {
        try testClient().cover()
    }

    /// Destroys `cover()`'s surface; returns the app ids of the toplevels activated after a round
    /// trip (phoc gives the focus back at once: to the toplevel it last focused, or was last asked
    /// to focus).
    @discardableResult
    public func uncover() async throws -> [String] {
        try testClient().uncover()
    }

    // MARK: A crash and a restart

    /// Kills phoc with SIGKILL, as a crash would, and waits for it, the client and every window
    /// (each exits when its compositor goes; SIGKILL after 2 s). The socket and its lock file stay
    /// in the runtime directory. Nothing happens when phoc is not running.
    public func killCompositor() async {
        guard let killed = running.withLock({ running in defer { running = nil }; return running }) else { return }
        killed.phoc.terminate(signal: SIGKILL)
        let open = windows.withLock { windows in defer { windows = [] }; return windows }
        for window in open { window.process.terminate(signal: 0, timeout: .seconds(2)) }
        killed.client.stop()
    }

    /// Kills phoc if it runs (`killCompositor()`), then starts a new one in the same directory and
    /// waits (up to `timeout`) until it answers a new client. phoc takes the same socket name.
    /// - Throws: `HarnessError` when phoc does not come up or names another socket.
    public func restart(timeout: Duration = patience) async throws {
        await killCompositor()
        guard !stopped.withLock({ $0 }) else { throw HarnessError("the bed is stopped") }
        let started = try await Self.launch(
            directory: runtimeDirectory, config: config, log: log, client: clientExecutable, timeout: timeout)
        guard started.display == waylandDisplay else {
            started.running.client.stop()
            started.running.phoc.terminate(signal: SIGKILL)
            throw HarnessError("the new phoc named \(started.display), not \(waylandDisplay)")
        }
        running.withLock { $0 = started.running }
    }

    // MARK: Stopping

    /// Kills every window (SIGKILL), ends the client, kills phoc (SIGTERM, which ends it at once,
    /// then SIGKILL), waits for each, and removes the runtime directory. Calling it again does
    /// nothing.
    public func stop() {
        guard stopped.withLock({ stopped in defer { stopped = true }; return !stopped }) else { return }
        let open = windows.withLock { windows in defer { windows = [] }; return windows }
        for window in open { window.process.terminate(signal: SIGKILL) }
        if let last = running.withLock({ running in defer { running = nil }; return running }) {
            last.client.stop()
            last.phoc.terminate(signal: SIGTERM, timeout: .seconds(5))
        }
        removeTree(runtimeDirectory)
    }
}

extension HeadlessPhoc {
    /// A toplevel as the bed's client lists it.
    public typealias Toplevel = WaylandTestClientProcess.Toplevel

    /// A window `openWindow` opened: its foot process.
    public struct Window: Sendable {
        /// The app id it was opened with.
        public var appID: String
        /// foot's PID.
        public var pid: Int32
        let process: ChildProcess
    }
}
