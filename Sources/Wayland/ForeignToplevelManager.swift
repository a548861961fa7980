import CForeignToplevel
import CWaylandClient

/// The compositor's list of toplevel windows, through the wlr foreign-toplevel-management
/// protocol: a bound `zwlr_foreign_toplevel_manager_v1` and a `zwlr_foreign_toplevel_handle_v1`
/// per window, reported as Swift values.
///
/// Once bound, the compositor announces every window, existing and new: each becomes an `id`
/// (a counter of this manager, from 1), followed by its details and `.done(id:)` at first and
/// after each change, and `.closed(id:)` when the window is gone (its handle is then destroyed:
/// the `destroy` request and `wl_proxy_destroy`). Titles and outputs are not reported.
///
/// Events are collected while libwayland dispatches them and handed to `onEvent` after it
/// returns (see `WaylandDisplay`), so the handler may call `stop()` or close the connection.
///
/// Lives on the connection's thread; `stop()` (also run by `deinit`) and the connection's
/// `close()` destroy its proxies.
package final class ForeignToplevelManager {
    /// What the compositor reports.
    package enum Event: Sendable, Hashable {
        /// A window appeared (`toplevel`): its details and `.done` follow.
        case toplevel(id: UInt64)
        /// The window's app id (`app_id`).
        case appID(id: UInt64, String)
        /// The window's states (`state`, its uint32 array decoded).
        case state(id: UInt64, ForeignToplevelState)
        /// The window's parent window, or none (`parent`, version 3).
        case parent(id: UInt64, parent: UInt64?)
        /// The details sent since the last `done` are one change (`done`).
        case done(id: UInt64)
        /// The window is gone (`closed`); its handle was destroyed.
        case closed(id: UInt64)
        /// The compositor is done with the manager (`finished`); every proxy was destroyed and
        /// nothing follows.
        case finished
    }

    /// The protocol's global interface name.
    package static let interfaceName = "zwlr_foreign_toplevel_manager_v1"
    /// The highest version this implementation speaks.
    package static let highestVersion = UInt32(NOTIFYBUS_FOREIGN_TOPLEVEL_VERSION)

    /// The version bound: the lower of `highestVersion` and the compositor's.
    package let version: UInt32
    /// Whether the manager is stopped or finished: no event comes after this.
    package var isStopped: Bool { proxies.isStopped }
    /// How many windows are open (handles not yet closed).
    package var handleCount: Int { proxies.count }

    let display: WaylandDisplay
    private var manager: OpaquePointer?
    /// The handles' proxies, their ids and their events.
    var proxies = WindowProxies<Event>()
    let onEvent: (Event) -> Void
    private let managerListener: ListenerTable<zwlr_foreign_toplevel_manager_v1_listener>
    private let handleListener: ListenerTable<zwlr_foreign_toplevel_handle_v1_listener>

    /// Binds the compositor's `zwlr_foreign_toplevel_manager_v1` global (from `display.globals`,
    /// so after a round trip) at `highestVersion` or the compositor's highest, whichever is lower,
    /// and sends the bind with the next flush. Wraps `wl_registry_bind` and `wl_proxy_add_listener`.
    /// - Throws: `WaylandError.protocolNotOffered` when the registry has no such global;
    ///   `.requestFailed` on a closed or failed connection; `.connectionLost` when the bind
    ///   cannot be flushed.
    package init(display: WaylandDisplay, onEvent: @escaping (Event) -> Void) throws(WaylandError) {
        guard let global = display.global(named: Self.interfaceName) else {
            throw .protocolNotOffered(Self.interfaceName)
        }
        if let failure = display.failure { throw failure }
        guard !display.isClosed, let registry = display.registry else {
            throw .requestFailed(operation: "wl_registry.bind on a closed connection")
        }
        let bound = max(1, min(global.version, Self.highestVersion))
        guard let manager = notifybus_foreign_toplevel_manager_bind(registry, global.name, bound) else {
            throw .requestFailed(operation: "wl_registry.bind")
        }
        self.display = display
        self.version = bound
        self.onEvent = onEvent
        self.manager = manager
        managerListener = ListenerTable(zwlr_foreign_toplevel_manager_v1_listener(toplevel: managerToplevel, finished: managerFinished))
        handleListener = ListenerTable(
            zwlr_foreign_toplevel_handle_v1_listener(
                title: handleTitle, app_id: handleAppID, output_enter: handleOutput, output_leave: handleOutput,
                state: handleState, done: handleDone, closed: handleClosed, parent: handleParent))
        _ = notifybus_foreign_toplevel_manager_add_listener(
            manager, managerListener.pointer, Unmanaged.passUnretained(self).toOpaque())
        display.adopt(self)
        try display.flush()
    }

    deinit { stop() }

    /// Stops: destroys every handle (the `destroy` request, `wl_proxy_destroy`), sends the
    /// manager's `stop` request and destroys its proxy, and flushes; no event is handed over
    /// after this. Wraps `zwlr_foreign_toplevel_handle_v1.destroy`,
    /// `zwlr_foreign_toplevel_manager_v1.stop` (`wl_proxy_marshal_flags`) and `wl_proxy_destroy`.
    package func stop() { stopProxies() }

    /// Destroys the handles' proxies (with their `destroy` requests), then the manager's (after
    /// its `stop` request when `sendingRequests`).
    func destroyProxies(sendingRequests: Bool) {
        for handle in proxies.stop() { notifybus_foreign_toplevel_handle_destroy(handle) }
        if let manager {
            if sendingRequests { notifybus_foreign_toplevel_manager_stop(manager) }
            notifybus_foreign_toplevel_manager_destroy(manager)
        }
        manager = nil
    }

    // MARK: From libwayland's dispatch

    fileprivate func announced(_ handle: OpaquePointer) {
        guard proxies.add(handle, announce: { .toplevel(id: $0) }) else {
            notifybus_foreign_toplevel_handle_destroy(handle)
            return
        }
        _ = notifybus_foreign_toplevel_handle_add_listener(handle, handleListener.pointer, Unmanaged.passUnretained(self).toOpaque())
    }

    fileprivate func finished() {
        guard !isStopped else { return }
        proxies.hold(.finished)
        destroyProxies(sendingRequests: false)
    }

    fileprivate func handleEvent(_ handle: OpaquePointer, _ event: (UInt64) -> Event) {
        proxies.hold(from: handle, event)
    }

    fileprivate func closed(_ handle: OpaquePointer) {
        if proxies.remove(handle, { .closed(id: $0) }) { notifybus_foreign_toplevel_handle_destroy(handle) }
    }

    fileprivate func id(of handle: OpaquePointer?) -> UInt64? {
        proxies.id(of: handle)
    }
}

extension ForeignToplevelManager: WindowListProxyOwner {}

@available(*, unavailable, message: "a ForeignToplevelManager stays on its loop thread")
extension ForeignToplevelManager: Sendable {}

// libwayland's callbacks run inside `wl_display_dispatch_pending`, on the loop thread; `data` is
// the ForeignToplevelManager, unretained (it destroys its proxies before it goes away).

private func manager(_ data: UnsafeMutableRawPointer?) -> ForeignToplevelManager? {
    data.map { Unmanaged<ForeignToplevelManager>.fromOpaque($0).takeUnretainedValue() }
}

private func managerToplevel(_ data: UnsafeMutableRawPointer?, _ proxy: OpaquePointer?, _ handle: OpaquePointer?) {
    guard let handle else { return }
    manager(data)?.announced(handle)
}

private func managerFinished(_ data: UnsafeMutableRawPointer?, _ proxy: OpaquePointer?) {
    manager(data)?.finished()
}

private func handleTitle(_ data: UnsafeMutableRawPointer?, _ handle: OpaquePointer?, _ title: UnsafePointer<CChar>?) {}

private func handleOutput(_ data: UnsafeMutableRawPointer?, _ handle: OpaquePointer?, _ output: OpaquePointer?) {}

private func handleAppID(_ data: UnsafeMutableRawPointer?, _ handle: OpaquePointer?, _ appID: UnsafePointer<CChar>?) {
    guard let handle, let appID else { return }
    let value = String(cString: appID)
    manager(data)?.handleEvent(handle) { .appID(id: $0, value) }
}

private func handleState(_ data: UnsafeMutableRawPointer?, _ handle: OpaquePointer?, _ array: UnsafeMutablePointer<wl_array>?) {
    guard let handle else { return }
    var values: [UInt32] = []
    if let array, let bytes = array.pointee.data {
        let count = array.pointee.size / MemoryLayout<UInt32>.size
        values.reserveCapacity(count)
        for index in 0..<count {
            values.append(UnsafeRawPointer(bytes).loadUnaligned(fromByteOffset: index * 4, as: UInt32.self))
        }
    }
    let state = ForeignToplevelState(protocolValues: values)
    manager(data)?.handleEvent(handle) { .state(id: $0, state) }
}

private func handleDone(_ data: UnsafeMutableRawPointer?, _ handle: OpaquePointer?) {
    guard let handle else { return }
    manager(data)?.handleEvent(handle) { .done(id: $0) }
}

private func handleClosed(_ data: UnsafeMutableRawPointer?, _ handle: OpaquePointer?) {
    guard let handle else { return }
    manager(data)?.closed(handle)
}

private func handleParent(_ data: UnsafeMutableRawPointer?, _ handle: OpaquePointer?, _ parent: OpaquePointer?) {
    guard let handle, let manager = manager(data) else { return }
    let parentID = manager.id(of: parent)
    manager.handleEvent(handle) { .parent(id: $0, parent: parentID) }
}
