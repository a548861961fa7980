package import Wayland

/// The windows a wlroots compositor (sway, labwc, river, phoc, …) reports through
/// `zwlr_foreign_toplevel_manager_v1`, bound at version 3 or the compositor's highest when
/// that is lower.
///
/// The first list is known after the second round trip (every existing window's first `done`);
/// the list changes at a window's `done` or `closed`. A window is listed from its first `done`,
/// with its app id once the compositor sent one, no pid (the protocol has none) and `activated`
/// from its state. The manager's `finished` ends the watcher.
///
/// A wlroots compositor answers the registry in about a millisecond: the blocking watcher waits
/// 200 ms for it.
package struct WlrWindowList: ToplevelWindowList {
    package typealias Manager = ForeignToplevelManager
    package static let registryTimeout: Duration = .milliseconds(200)
    package static let firstListRoundTrips = 1

    private struct WindowState {
        /// The window as its last `done` left it; `nil` before its first `done`.
        var committed: ToplevelWindow?
        /// The window with the details sent since.
        var current: ToplevelWindow
    }

    /// The windows by id: what their last `done` said (`committed`), and what arrived since.
    private var windows: [UInt64: WindowState] = [:]

    package init() {}

    package mutating func apply(_ event: Manager.Event) -> ToplevelListChange {
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
            guard var window = windows[id], window.committed != window.current else { return .unchanged }
            window.committed = window.current
            windows[id] = window
            return .changed
        case .closed(let id):
            if let window = windows.removeValue(forKey: id), window.committed != nil { return .changed }
        case .finished:
            return .finished(reason: "the compositor finished \(ForeignToplevelManager.interfaceName)")
        }
        return .unchanged
    }

    package var listed: [ToplevelWindow] { windows.values.compactMap(\.committed) }
}
