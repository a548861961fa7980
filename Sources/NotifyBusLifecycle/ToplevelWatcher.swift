package import EpollLoop
package import Wayland

/// A Wayland window backend: the windows a compositor reports through one window-list protocol
/// (`List`: `WlrWindowList` for `zwlr_foreign_toplevel_manager_v1`, `KdeWindowList` for
/// `org_kde_plasma_window_management`), as `ToplevelUpdate`s for the lifecycle policy.
///
/// It connects to the compositor's Wayland socket, binds the protocol's manager, and reports
/// `.windows` once the first list is known (after `List.firstListRoundTrips` round trips past
/// the bind), then after each batch of events that changed the list (one report per read of the
/// socket, and none when the windows as reported did not change, a new title say).
/// `.lost(reason:)` comes once when the connection fails or the compositor finishes the manager;
/// then everything is released. Nothing comes after `stop()`.
///
/// Runs on its loop's thread, with no thread or timer of its own: idle, it sleeps in the loop's
/// `epoll_wait`. Only `init(context:display:registryTimeout:onUpdate:)` blocks, for the
/// registry's round trip (at most `List.registryTimeout` unless told otherwise); the lifecycle
/// reads the registry on the loop instead (`WaylandToplevelBackend`).
package final class ToplevelWatcher<List: ToplevelWindowList> {
    /// How long `init` waits for the compositor's registry unless told otherwise.
    package static var registryTimeout: Duration { List.registryTimeout }

    private let onUpdate: (ToplevelUpdate) -> Void
    private var display: WaylandDisplay?
    private var manager: List.Manager?
    private var list = List()
    private var reporting = ToplevelListReport()

    /// The compositor's process id (the Wayland socket's peer credentials, `SO_PEERCRED`), taken
    /// when connecting: the process the freezer must never freeze. Kept after the connection
    /// ends.
    package let compositorPID: Int32?

    /// Connects to `display` (nil: `$WAYLAND_DISPLAY`, else `wayland-0`; relative to
    /// `$XDG_RUNTIME_DIR` as libwayland does), binds the manager, and reports `.windows` once the
    /// first list is known, then after every change; `.lost(reason:)` once when the connection
    /// fails or the manager finishes; nothing after `stop()`.
    ///
    /// Blocks for the registry's round trip, at most `registryTimeout`. `onUpdate` runs on the
    /// loop's thread, never inside `init`.
    /// - Throws: `WaylandError.noCompositor` when nothing listens at the socket;
    ///   `.protocolNotOffered(List.Manager.interfaceName)` when the compositor does not offer the protocol
    ///   to this process; `.noAnswer` when the compositor does not answer within
    ///   `registryTimeout`; `.connectionLost`, `.protocolError` when the connection fails meanwhile.
    package convenience init(
        context: LoopContext, display: String?, registryTimeout: Duration = List.registryTimeout,
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
            manager = try List.Manager(display: connection) { [weak self] event in self?.apply(event) }
            try roundTrip(after: List.firstListRoundTrips)
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
    /// is reported after this. Wraps the manager's `stop()` and `WaylandDisplay.close()`.
    package func stop() {
        _ = reporting.end()
        release()
    }

    // MARK: Events

    /// Asks for `count` round trips one after another, the last one's answer marking the first
    /// list known: each brings the events the compositor sent in answer to the one before.
    private func roundTrip(after count: Int) throws(WaylandError) {
        guard let display else { return }
        try display.sync { [weak self] in
            guard let self else { return }
            guard count > 1 else {
                self.reporting.firstListArrived()
                return
            }
            do throws(WaylandError) {
                try self.roundTrip(after: count - 1)
            } catch {
                self.lose(reason: error.description)
            }
        }
    }

    private func apply(_ event: List.Manager.Event) {
        guard !reporting.ended else { return }
        switch list.apply(event) {
        case .unchanged: break
        case .changed: reporting.windowsChanged()
        case .finished(let reason): lose(reason: reason)
        }
    }

    /// After each batch of events: the list, if it changed.
    private func report() {
        guard let windows = reporting.afterEvents(list.listed) else { return }
        onUpdate(.windows(windows))
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
        list = List()
    }
}

@available(*, unavailable, message: "a ToplevelWatcher stays on its loop thread")
extension ToplevelWatcher: Sendable {}

/// The wlr window backend (`zwlr_foreign_toplevel_manager_v1`: sway, labwc, river, phoc, …).
package typealias WlrToplevelWatcher = ToplevelWatcher<WlrWindowList>
/// The KDE window backend (`org_kde_plasma_window_management`: KWin, in Plasma and Plasma Mobile).
package typealias KdeToplevelWatcher = ToplevelWatcher<KdeWindowList>

/// The manager object of a window-list protocol, on its connection's thread.
package protocol ToplevelManager: AnyObject {
    /// What the compositor reports through it.
    associatedtype Event
    /// The protocol's global interface name.
    static var interfaceName: String { get }
    /// Binds the manager on `display`, whose registry is read.
    init(display: WaylandDisplay, onEvent: @escaping (Event) -> Void) throws(WaylandError)
    /// Destroys its proxies; no event comes after this.
    func stop()
}

extension ForeignToplevelManager: ToplevelManager {}
extension PlasmaWindowManager: ToplevelManager {}

/// What one event of the protocol did to the list of windows.
package enum ToplevelListChange: Equatable {
    /// The windows as listed are the same.
    case unchanged
    /// A window as listed changed, came or went.
    case changed
    /// The compositor is done with the manager: the watcher ends with this reason.
    case finished(reason: String)
}

/// The windows of one window-list protocol as its events leave them: a state struct that
/// `ToplevelWatcher` feeds and reads, with no I/O of its own.
package protocol ToplevelWindowList {
    /// The protocol's manager.
    associatedtype Manager: ToplevelManager
    /// How long the blocking `ToplevelWatcher.init` waits for the registry unless told otherwise.
    static var registryTimeout: Duration { get }
    /// The round trips after the bind whose answers bring every window that existed at the bind
    /// with its first full details.
    static var firstListRoundTrips: Int { get }
    /// No window.
    init()
    /// Takes one event of the manager.
    mutating func apply(_ event: Manager.Event) -> ToplevelListChange
    /// The windows to report, in no particular order.
    var listed: [ToplevelWindow] { get }
}
