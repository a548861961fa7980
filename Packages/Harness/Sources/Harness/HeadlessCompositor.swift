
/// A headless compositor with real windows, for the app-lifecycle tests: `HeadlessSway` (foot
/// windows), `HeadlessPhoc` (foot windows) or `HeadlessKWin` (GTK windows).
public protocol HeadlessCompositor: AnyObject, Sendable {
    /// A window `openWindow` opened.
    associatedtype Window: Sendable

    /// The compositor's process ID.
    var pid: Int32 { get }
    /// The Wayland socket's absolute path (libwayland takes one as the display name).
    var displayPath: String { get }
    /// What a client of the compositor needs (`XDG_RUNTIME_DIR`, `WAYLAND_DISPLAY`, and the
    /// compositor's own: `SWAYSOCK`, a session bus).
    var environment: [String: String] { get }

    /// Opens a window with the app id `appID`, its process first moved into the cgroup whose
    /// directory is `cgroupDirectory` when one is given; returns once the compositor has it.
    @discardableResult
    func openWindow(appID: String, inCgroup cgroupDirectory: String?, timeout: Duration) async throws -> Window
    /// Focuses the (first) window of `appID`.
    func focus(appID: String) async throws
    /// Kills the windows of `appID` and waits for them to go.
    func close(appID: String, timeout: Duration) async throws
    /// Kills every window and the compositor and removes what it made; again does nothing.
    func stop()
}

/// A compositor whose windows another launcher can start (a systemd user manager's
/// `systemd-run --user --scope`): the command and environment of a window, then the window of the
/// process started so.
public protocol ScopeLaunchedWindows: HeadlessCompositor {
    /// The command and environment of a window of `appID`, to start as `nobody`.
    func windowCommand(appID: String) -> (command: [String], environment: [String: String])
    /// Takes the window of `process` as one of the compositor's; returns once it shows.
    @discardableResult
    func adoptWindow(appID: String, process: ChildProcess, timeout: Duration) async throws -> Window
}

extension HeadlessSway: ScopeLaunchedWindows {}

extension HeadlessSway: HeadlessCompositor {
    /// The Wayland socket's absolute path (libwayland takes one as the display name).
    public var displayPath: String { runtimeDirectory + "/" + waylandDisplay }
}

extension HeadlessKWin: HeadlessCompositor {}

extension HeadlessPhoc: HeadlessCompositor {
    /// The Wayland socket's absolute path (libwayland takes one as the display name).
    public var displayPath: String { runtimeDirectory + "/" + waylandDisplay }

    /// Focuses the (first) window of `appID`, as Phosh's overview does (`activate(seat)`).
    public func focus(appID: String) async throws {
        try await focus(appID: appID, timeout: patience)
    }
}
