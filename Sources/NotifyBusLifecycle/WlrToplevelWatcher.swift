package import EpollLoop
package import Wayland

/// The wlr window backend: the toplevel windows a wlroots compositor (sway, labwc, river, …)
/// reports through `zwlr_foreign_toplevel_manager_v1`, as `ToplevelUpdate`s for the lifecycle
/// policy.
///
/// It connects to the compositor's Wayland socket, binds the manager (at version 3, or at the
/// compositor's highest when that is lower), and reports `.windows` once the first list is known (the second round
/// trip: after every existing window's first `done`), then after each batch of events that
/// changed the list (a window's `done` or `closed`; one report per read of the socket, and none
/// when the windows as reported did not change, a new title say). A window is listed from its
/// first `done`, with its app id once the compositor sent one, no pid (the protocol has none)
/// and `activated` from its state. `.lost(reason:)` comes once when the connection fails or the
/// compositor finishes the manager; then everything is released. Nothing comes after `stop()`.
///
/// Runs on its loop's thread, with no thread or timer of its own: idle, it sleeps in the loop's
/// `epoll_wait`. Only `init(context:display:registryTimeout:onUpdate:)` blocks: for the
/// registry's round trip, at most 200 ms unless told otherwise (a wlroots compositor answers it
/// in about a millisecond); the lifecycle reads the registry on the loop instead
/// (`WaylandToplevelBackend`).
package final class WlrToplevelWatcher {
    /// How long `init` waits for the compositor's registry unless told otherwise.
    package static let registryTimeout: Duration = .milliseconds(200)

    private let onUpdate: (ToplevelUpdate) -> Void
    private var display: WaylandDisplay?
    private var manager: ForeignToplevelManager?
    /// The windows by id: what their last `done` said (`committed`), and what arrived since.
    private var windows: [UInt64: WindowState] = [:]
    private var reporting = ToplevelListReport()

    /// The compositor's process id (the Wayland socket's peer credentials, `SO_PEERCRED`), taken
    /// when connecting: the process the freezer must never freeze. Kept after the connection
    /// ends.
    package let compositorPID: Int32?

    /// Connects to `display` (nil: `$WAYLAND_DISPLAY`, else `wayland-0`; relative to
    /// `$XDG_RUNTIME_DIR` as libwayland does), binds the manager (version min(3, offered)), and
    /// reports `.windows` once the first list is known (after the round trips that deliver every
    /// existing handle's `done`), then after every `done`/`closed`; `.lost(reason:)` once when
    /// the connection fails or the manager finishes; nothing after `stop()`.
    ///
    /// Blocks for the registry's round trip, at most `registryTimeout`. `onUpdate` runs on the
    /// loop's thread, never inside `init`.
    /// - Throws: `WaylandError.noCompositor` when nothing listens at the socket;
    ///   `.protocolNotOffered("zwlr_foreign_toplevel_manager_v1")` when the compositor does not
    ///   offer the protocol (GNOME, KDE); `.noAnswer` when the compositor does not answer within
    ///   `registryTimeout`; `.connectionLost`, `.protocolError` when the connection fails meanwhile.
    package convenience init(
        context: LoopContext, display: String?, registryTimeout: Duration = WlrToplevelWatcher.registryTimeout,
        onUpdate: @escaping (ToplevelUpdate) -> Void
    ) throws(WaylandError) {
        try self.init(context: context, connection: WaylandDisplay(registryOf: display, timeout: registryTimeout), onUpdate: onUpdate)
    }

    /// Watches on `connection`, whose registry has been read (by a round trip, or on the loop by
    /// `WaylandToplevelBackend`, which watches it already); closes it when it throws.
    init(context: LoopContext, connection: WaylandDisplay, onUpdate: @escaping (ToplevelUpdate) -> Void) throws(WaylandError) {
        self.onUpdate = onUpdate
        compositorPID = connection.compositorPID
        do throws(WaylandError) {
            self.display = connection
            manager = try ForeignToplevelManager(display: connection) { [weak self] event in self?.apply(event) }
            try connection.sync { [weak self] in self?.firstListArrived() }
            try connection.attach(
                on: context, afterEvents: { [weak self] in self?.report() },
                onFailure: { [weak self] error in self?.lose(reason: error.description) })
        } catch {
            release()
            connection.close()
            throw error
        }
    }

    deinit { release() }

    /// Whether the connection is open: from `init` until `stop()` or `.lost`.
    var isConnected: Bool { display != nil }

    /// Stops watching: destroys the manager's and the windows' proxies and disconnects; nothing
    /// is reported after this. Wraps `ForeignToplevelManager.stop()` and `WaylandDisplay.close()`.
    package func stop() {
        _ = reporting.end()
        release()
    }

    // MARK: Events

    private struct WindowState {
        /// The window as its last `done` left it; `nil` before its first `done`.
        var committed: ToplevelWindow?
        /// The window with the details sent since.
        var current: ToplevelWindow
    }

    private func apply(_ event: ForeignToplevelManager.Event) {
        guard !reporting.ended else { return }
        switch event {
        case .toplevel(let id):
            windows[id] = WindowState(committed: nil, current: ToplevelWindow(id: id, appID: nil, activated: false))
        case .appID(let id, let appID):
            windows[id]?.current.appID = appID
        case .state(let id, let state):
            windows[id]?.current.activated = state.contains(.activated)
        case .parent:
            break
        case .done(let id):
            guard var window = windows[id] else { return }
            if window.committed != window.current {
                window.committed = window.current
                reporting.windowsChanged()
            }
            windows[id] = window
        case .closed(let id):
            if let window = windows.removeValue(forKey: id), window.committed != nil { reporting.windowsChanged() }
        case .finished:
            lose(reason: "the compositor finished \(ForeignToplevelManager.interfaceName)")
        }
    }

    /// The second round trip came back: every window that existed at the bind has sent its
    /// first `done`.
    private func firstListArrived() {
        reporting.firstListArrived()
    }

    /// After each batch of events: the list, if it changed.
    private func report() {
        guard let list = reporting.afterEvents(windows.values.compactMap(\.committed)) else { return }
        onUpdate(.windows(list))
    }

    private func lose(reason: String) {
        guard reporting.end() else { return }
        release()
        onUpdate(.lost(reason: reason))
    }

    /// Destroys the proxies and disconnects.
    private func release() {
        manager?.stop()
        manager = nil
        display?.close()
        display = nil
        windows = [:]
    }
}

@available(*, unavailable, message: "a WlrToplevelWatcher stays on its loop thread")
extension WlrToplevelWatcher: Sendable {}
