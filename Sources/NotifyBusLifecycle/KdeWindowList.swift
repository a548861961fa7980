package import Wayland

/// The windows KWin (Plasma, Plasma Mobile) reports through `org_kde_plasma_window_management`
/// (version 4), every window it announces asked for at once.
///
/// The first list is known after the third round trip (every existing window's
/// `initial_state`). A window is listed from its `initial_state`, with its app id, its process
/// (`pid_changed`) and `activated` from its `active` state; a window whose state has
/// `skip_taskbar` (KWin's panels, desktop, notifications, on-screen displays) is not listed while
/// it has it.
///
/// KWin offers the protocol only to a client whose executable is named by the `Exec=` of an
/// installed desktop file listing it in `X-KDE-Wayland-Interfaces` (the package installs one for
/// notifybusd); to any other the registry lacks it, and the watcher throws `.protocolNotOffered`.
///
/// KWin answers a trusted client's registry only after hashing its executable (SHA-256 of the
/// file at its path and of `/proc/PID/exe`, on KWin's main thread: 15 to 25 ms per MB of the
/// binary on a 2-vCPU machine, 0.4 s for a 20 MB one), so the first round trip takes that long:
/// the blocking watcher waits 1 s for it.
package struct KdeWindowList: ToplevelWindowList {
    package typealias Manager = PlasmaWindowManager
    package static let registryTimeout: Duration = .seconds(1)
    /// The first sync comes back after every `window` of the bind (each asked for at once); the
    /// second after every window's first details and `initial_state`.
    package static let firstListRoundTrips = 2

    private struct WindowState {
        /// Whether its `initial_state` came: from then on it is listed.
        var known = false
        var skipsTaskbar = false
        var window: ToplevelWindow

        /// The window as listed: known and not skipping the task bar; `nil` otherwise.
        var listed: ToplevelWindow? { known && !skipsTaskbar ? window : nil }
    }

    private var windows: [UInt64: WindowState] = [:]

    package init() {}

    package mutating func apply(_ event: Manager.Event) -> ToplevelListChange {
        switch event {
        case .window(let id):
            windows[id] = WindowState(window: ToplevelWindow(id: id, appID: nil, activated: false))
            return .unchanged
        case .appID(let id, let appID):
            return update(id) { $0.window.appID = appID }
        case .pid(let id, let pid):
            return update(id) { $0.window.pid = pid > 0 && pid <= UInt32(Int32.max) ? Int32(pid) : nil }
        case .state(let id, let state):
            return update(id) { window in
                window.window.activated = state.contains(.active)
                window.skipsTaskbar = state.contains(.skipTaskbar)
            }
        case .initialState(let id):
            return update(id) { $0.known = true }
        case .unmapped(let id):
            if let window = windows.removeValue(forKey: id), window.known { return .changed }
            return .unchanged
        }
    }

    /// Applies `change` to window `id`: changed when its listing changed.
    private mutating func update(_ id: UInt64, _ change: (inout WindowState) -> Void) -> ToplevelListChange {
        guard var window = windows[id] else { return .unchanged }
        let before = window.listed
        change(&window)
        windows[id] = window
        return before != window.listed ? .changed : .unchanged
    }

    package var listed: [ToplevelWindow] { windows.values.compactMap(\.listed) }
}
