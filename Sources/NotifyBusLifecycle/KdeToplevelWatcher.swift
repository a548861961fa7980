package import EpollLoop
package import Wayland

/// The KDE window backend: the windows KWin (Plasma, Plasma Mobile) reports through
/// `org_kde_plasma_window_management`, as `ToplevelUpdate`s for the lifecycle policy.
///
/// It connects to the compositor's Wayland socket, binds the manager (version 4), asks for
/// every window it announces, and reports `.windows` once the first list is known (the third
/// round trip: after every existing window's `initial_state`), then after each batch of events
/// that changed the list (one report per read of the socket, and none when the windows as
/// reported did not change, a new title say). A window is listed from its `initial_state`, with
/// its app id, its process (`pid_changed`) and `activated` from its `active` state; a window
/// whose state has `skip_taskbar` (KWin's panels, desktop, notifications, on-screen displays) is
/// not listed while it has it. `.lost(reason:)` comes once when the connection fails; then
/// everything is released. Nothing comes after `stop()`.
///
/// KWin offers the protocol only to a client whose executable is named by the `Exec=` of an
/// installed desktop file listing it in `X-KDE-Wayland-Interfaces` (the package installs one for
/// notifybusd); to any other the registry lacks it, and `init` throws `.protocolNotOffered`.
///
/// KWin answers a trusted client's registry only after hashing its executable (SHA-256 of the
/// file at its path and of `/proc/PID/exe`, on KWin's main thread: 15 to 25 ms per MB of the
/// binary on a 2-vCPU machine, 0.4 s for a 20 MB one), so the first round trip takes that long.
///
/// Runs on its loop's thread, with no thread or timer of its own: idle, it sleeps in the loop's
/// `epoll_wait`. Only `init(context:display:registryTimeout:onUpdate:)` blocks, for the
/// registry's round trip; the lifecycle reads the registry on the loop instead
/// (`WaylandToplevelBackend`).
package final class KdeToplevelWatcher {
    /// How long `init` waits for the compositor's registry unless told otherwise.
    package static let registryTimeout: Duration = .seconds(1)

    private let onUpdate: (ToplevelUpdate) -> Void
    private var display: WaylandDisplay?
    private var manager: PlasmaWindowManager?
    private var windows: [UInt64: WindowState] = [:]
    private var reporting = ToplevelListReport()

    /// The compositor's process id (the Wayland socket's peer credentials, `SO_PEERCRED`), taken
    /// when connecting: the process the freezer must never freeze. Kept after the connection
    /// ends.
    package let compositorPID: Int32?

    /// Connects to `display` (nil: `$WAYLAND_DISPLAY`, else `wayland-0`; relative to
    /// `$XDG_RUNTIME_DIR` as libwayland does), binds the manager, and reports `.windows` once the
    /// first list is known, then after every change; `.lost(reason:)` once when the connection
    /// fails; nothing after `stop()`.
    ///
    /// Blocks for the registry's round trip, at most `registryTimeout`. `onUpdate` runs on the
    /// loop's thread, never inside `init`.
    /// - Throws: `WaylandError.noCompositor` when nothing listens at the socket;
    ///   `.protocolNotOffered("org_kde_plasma_window_management")` when the compositor does not
    ///   offer the protocol to this process (not KWin, or no desktop file grants it); `.noAnswer`
    ///   when the compositor does not answer within `registryTimeout`; `.connectionLost`,
    ///   `.protocolError` when the connection fails meanwhile.
    package convenience init(
        context: LoopContext, display: String?, registryTimeout: Duration = KdeToplevelWatcher.registryTimeout,
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
            manager = try PlasmaWindowManager(display: connection) { [weak self] event in self?.apply(event) }
            // The first sync comes back after every `window` of the bind (each asked for at once);
            // the second after every window's first details and `initial_state`.
            try connection.sync { [weak self] in
                guard let self, let display = self.display else { return }
                do throws(WaylandError) {
                    try display.sync { [weak self] in self?.firstListArrived() }
                } catch {
                    self.lose(reason: error.description)
                }
            }
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
    /// is reported after this. Wraps `PlasmaWindowManager.stop()` and `WaylandDisplay.close()`.
    package func stop() {
        _ = reporting.end()
        release()
    }

    // MARK: Events

    private struct WindowState {
        /// Whether its `initial_state` came: from then on it is listed.
        var known = false
        var skipsTaskbar = false
        var window: ToplevelWindow

        /// The window as listed: known and not skipping the task bar; `nil` otherwise.
        var listed: ToplevelWindow? { known && !skipsTaskbar ? window : nil }
    }

    private func apply(_ event: PlasmaWindowManager.Event) {
        guard !reporting.ended else { return }
        switch event {
        case .window(let id):
            windows[id] = WindowState(window: ToplevelWindow(id: id, appID: nil, activated: false))
        case .appID(let id, let appID):
            update(id) { $0.window.appID = appID }
        case .pid(let id, let pid):
            update(id) { $0.window.pid = pid > 0 && pid <= UInt32(Int32.max) ? Int32(pid) : nil }
        case .state(let id, let state):
            update(id) { window in
                window.window.activated = state.contains(.active)
                window.skipsTaskbar = state.contains(.skipTaskbar)
            }
        case .initialState(let id):
            update(id) { $0.known = true }
        case .unmapped(let id):
            if let window = windows.removeValue(forKey: id), window.known { reporting.windowsChanged() }
        }
    }

    /// Applies `change` to window `id`; a listed window's change is to be reported.
    private func update(_ id: UInt64, _ change: (inout WindowState) -> Void) {
        guard var window = windows[id] else { return }
        let before = window.listed
        change(&window)
        if before != window.listed { reporting.windowsChanged() }
        windows[id] = window
    }

    /// The third round trip came back: every window that existed at the bind has sent its
    /// `initial_state`.
    private func firstListArrived() {
        reporting.firstListArrived()
    }

    /// After each batch of events: the list, if it changed.
    private func report() {
        guard let list = reporting.afterEvents(windows.values.compactMap(\.listed)) else { return }
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

@available(*, unavailable, message: "a KdeToplevelWatcher stays on its loop thread")
extension KdeToplevelWatcher: Sendable {}
