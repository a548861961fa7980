import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A bed whose daemon's lines a `WatcherLog` reads: the daemon and its `notifywatch --daemon 'app/**'`.
protocol LifecycleWatched: AnyObject {
    var daemon: DaemonBed? { get }
    var watcher: ChildProcess? { get }
}

/// What the rules that depend on the window backend need of a bed, whatever its compositor: the
/// tests that run on every compositor (`LifecycleCompositorTests`) are written against it.
protocol CompositorBed: LifecycleWatched {
    var scopes: AppScopes { get }
    var listed: [String] { get }
    var runtime: String { get }
    var compositorPID: Int32 { get }
    /// A window of `appID` in an app scope of its own, or in `scope`; its scope.
    @discardableResult
    func openWindow(_ appID: String, in scope: AppScopes.Scope?) async throws -> AppScopes.Scope
    func focus(_ appID: String) async throws
    func close(_ appID: String) async throws
    /// notifybusd `--freeze-background` with `backend` (the bed's by default) and `arguments`, and
    /// its watcher.
    func startDaemon(_ arguments: [String], backend: String?) async throws
    /// Stops the daemon with `signal`; its exit status.
    @discardableResult
    func stopDaemon(_ signal: Int32) -> Int32?
    func stop()
}

/// The compositors the window-backend rules run on, each with the backend notifybusd uses there.
enum TestedCompositor: String, CaseIterable, Sendable, CustomStringConvertible {
    /// A headless sway, through sway's IPC.
    case sway
    /// A headless phoc 0.24 (Phosh's), through the wlr foreign-toplevel protocol.
    case phoc
    /// A headless KWin 5.27, through org_kde_plasma_window_management.
    case kwin

    var description: String { rawValue }

    /// notifybusd's `--toplevels` on it.
    var backend: String {
        switch self {
        case .sway: "sway"
        case .phoc: "wlr"
        case .kwin: "kde"
        }
    }

    /// Whether its tests run: in CI always (and fail there when the bed cannot be made), elsewhere
    /// only where the compositor is installed.
    var testsRun: Bool {
        guard SwayBedEnvironment.testsRun else { return false }
        if getenv("CI") != nil { return true }
        switch self {
        case .sway: return SwayBedEnvironment.hasSway
        case .phoc: return access("/usr/bin/phoc", X_OK) == 0
        case .kwin: return access("/usr/bin/kwin_wayland", X_OK) == 0
        }
    }

    /// Those whose tests run here.
    static var running: [TestedCompositor] { allCases.filter(\.testsRun) }

    /// A bed on it, without the daemon.
    func bed() async throws -> any CompositorBed {
        switch self {
        case .sway: return try await LifecycleBed(compositor: { try await HeadlessSway() }, backend: backend)
        case .phoc: return try await LifecycleBed(compositor: { try await HeadlessPhoc() }, backend: backend)
        case .kwin: return try await LifecycleBed(compositor: { try await HeadlessKWin(trusting: [Paths.notifybusd]) }, backend: backend)
        }
    }
}
