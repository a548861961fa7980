import CPlasmaWindowManagement
import CWaylandClient

/// The compositor's list of windows, through KDE's plasma-window-management protocol: a bound
/// `org_kde_plasma_window_management` (version 4) and an `org_kde_plasma_window` per window,
/// reported as Swift values.
///
/// Once bound, the compositor announces every mapped window, existing and new; the manager asks
/// for each one's object at once (`get_window`), and it becomes an `id` (a counter of this
/// manager, from 1), followed by its details and `.initialState(id:)`, then each change as it
/// comes, and `.unmapped(id:)` when the window is gone (its object is then destroyed: the
/// `destroy` request and `wl_proxy_destroy`). Titles, icons, geometry, desktops and menus are not
/// reported.
///
/// KWin offers the global only to clients it trusts: one whose executable is named by the
/// `Exec=` of an installed desktop file listing `org_kde_plasma_window_management` in
/// `X-KDE-Wayland-Interfaces`. To any other the registry just lacks it.
///
/// Events are collected while libwayland dispatches them and handed to `onEvent` after it
/// returns (see `WaylandDisplay`), so the handler may call `stop()` or close the connection.
///
/// Lives on the connection's thread; `stop()` (also run by `deinit`) and the connection's
/// `close()` destroy its proxies.
package final class PlasmaWindowManager {
    /// What the compositor reports.
    package enum Event: Sendable, Hashable {
        /// A window was mapped (`window`, then `get_window`): its details and `.initialState`
        /// follow.
        case window(id: UInt64)
        /// The window's app id (`app_id_changed`).
        case appID(id: UInt64, String)
        /// The process that owns the window (`pid_changed`).
        case pid(id: UInt64, UInt32)
        /// The window's states (`state_changed`).
        case state(id: UInt64, PlasmaWindowState)
        /// Every detail known at first was sent (`initial_state`).
        case initialState(id: UInt64)
        /// The window is gone (`unmapped`); its object was destroyed.
        case unmapped(id: UInt64)
    }

    /// The protocol's global interface name.
    package static let interfaceName = "org_kde_plasma_window_management"
    /// The version bound: the lowest with `initial_state` and a window's `destroy`.
    package static let version = UInt32(NOTIFYBUS_PLASMA_WINDOW_MANAGEMENT_VERSION)

    /// Whether the manager is stopped: no event comes after this.
    package var isStopped: Bool { proxies.isStopped }
    /// How many windows are open (objects not yet unmapped).
    package var windowCount: Int { proxies.count }

    let display: WaylandDisplay
    private var manager: OpaquePointer?
    /// The windows' proxies, their ids and their events.
    var proxies = WindowProxies<Event>()
    let onEvent: (Event) -> Void
    private let managerListener: ListenerTable<org_kde_plasma_window_management_listener>
    private let windowListener: ListenerTable<org_kde_plasma_window_listener>

    /// Binds the compositor's `org_kde_plasma_window_management` global (from `display.globals`,
    /// so after a round trip) at version 4, and sends the bind with the next flush. Wraps
    /// `wl_registry_bind` and `wl_proxy_add_listener`.
    /// - Throws: `WaylandError.protocolNotOffered` when the registry has no such global (KWin
    ///   does not trust this client), or offers it below version 4; `.requestFailed` on a closed
    ///   or failed connection; `.connectionLost` when the bind cannot be flushed.
    package init(display: WaylandDisplay, onEvent: @escaping (Event) -> Void) throws(WaylandError) {
        guard let global = display.global(named: Self.interfaceName) else {
            throw .protocolNotOffered(Self.interfaceName)
        }
        guard global.version >= Self.version else {
            throw .protocolNotOffered("\(Self.interfaceName) version \(Self.version) (it offers \(global.version))")
        }
        if let failure = display.failure { throw failure }
        guard !display.isClosed, let registry = display.registry else {
            throw .requestFailed(operation: "wl_registry.bind on a closed connection")
        }
        guard let manager = notifybus_plasma_window_management_bind(registry, global.name, Self.version) else {
            throw .requestFailed(operation: "wl_registry.bind")
        }
        self.display = display
        self.onEvent = onEvent
        self.manager = manager
        managerListener = ListenerTable(
            org_kde_plasma_window_management_listener(show_desktop_changed: managerShowDesktop, window: managerWindow))
        windowListener = ListenerTable(
            org_kde_plasma_window_listener(
                title_changed: windowText, app_id_changed: windowAppID, state_changed: windowState,
                virtual_desktop_changed: windowDesktop, themed_icon_name_changed: windowText, unmapped: windowUnmapped,
                initial_state: windowInitialState, parent_window: windowParent, geometry: windowGeometry,
                icon_changed: windowIcon, pid_changed: windowPID, virtual_desktop_entered: windowText,
                virtual_desktop_left: windowText, application_menu: windowMenu))
        _ = notifybus_plasma_window_management_add_listener(
            manager, managerListener.pointer, Unmanaged.passUnretained(self).toOpaque())
        display.adopt(self)
        try display.flush()
    }

    deinit { stop() }

    /// Stops: destroys every window (the `destroy` request, `wl_proxy_destroy`) and the
    /// manager's proxy, and flushes; no event is handed over after this. Wraps
    /// `org_kde_plasma_window.destroy` (`wl_proxy_marshal_flags`) and `wl_proxy_destroy`.
    package func stop() { stopProxies() }

    /// Destroys the windows' proxies (with their `destroy` requests), then the manager's (the
    /// protocol has no request to stop it).
    func destroyProxies(sendingRequests: Bool) {
        for window in proxies.stop() { notifybus_plasma_window_destroy(window) }
        if let manager { notifybus_plasma_window_management_destroy(manager) }
        manager = nil
    }

    // MARK: From libwayland's dispatch

    /// A `window` event: the window's object is asked for at once, in the same dispatch.
    fileprivate func announced(internalID: UInt32) {
        guard !isStopped, let manager,
            let window = notifybus_plasma_window_management_get_window(manager, internalID)
        else { return }
        proxies.add(window) { .window(id: $0) }
        _ = notifybus_plasma_window_add_listener(window, windowListener.pointer, Unmanaged.passUnretained(self).toOpaque())
    }

    fileprivate func windowEvent(_ window: OpaquePointer, _ event: (UInt64) -> Event) {
        proxies.hold(from: window, event)
    }

    fileprivate func unmapped(_ window: OpaquePointer) {
        if proxies.remove(window, { .unmapped(id: $0) }) { notifybus_plasma_window_destroy(window) }
    }
}

extension PlasmaWindowManager: WindowListProxyOwner {}

@available(*, unavailable, message: "a PlasmaWindowManager stays on its loop thread")
extension PlasmaWindowManager: Sendable {}

// libwayland's callbacks run inside `wl_display_dispatch_pending`, on the loop thread; `data` is
// the PlasmaWindowManager, unretained (it destroys its proxies before it goes away).

private func manager(_ data: UnsafeMutableRawPointer?) -> PlasmaWindowManager? {
    data.map { Unmanaged<PlasmaWindowManager>.fromOpaque($0).takeUnretainedValue() }
}

private func managerShowDesktop(_ data: UnsafeMutableRawPointer?, _ proxy: OpaquePointer?, _ state: UInt32) {}

private func managerWindow(_ data: UnsafeMutableRawPointer?, _ proxy: OpaquePointer?, _ internalID: UInt32) {
    manager(data)?.announced(internalID: internalID)
}

private func windowText(_ data: UnsafeMutableRawPointer?, _ window: OpaquePointer?, _ text: UnsafePointer<CChar>?) {}

private func windowDesktop(_ data: UnsafeMutableRawPointer?, _ window: OpaquePointer?, _ number: Int32) {}

private func windowParent(_ data: UnsafeMutableRawPointer?, _ window: OpaquePointer?, _ parent: OpaquePointer?) {}

private func windowGeometry(
    _ data: UnsafeMutableRawPointer?, _ window: OpaquePointer?, _ x: Int32, _ y: Int32, _ width: UInt32, _ height: UInt32
) {}

private func windowIcon(_ data: UnsafeMutableRawPointer?, _ window: OpaquePointer?) {}

private func windowMenu(
    _ data: UnsafeMutableRawPointer?, _ window: OpaquePointer?, _ service: UnsafePointer<CChar>?, _ path: UnsafePointer<CChar>?
) {}

private func windowAppID(_ data: UnsafeMutableRawPointer?, _ window: OpaquePointer?, _ appID: UnsafePointer<CChar>?) {
    guard let window, let appID else { return }
    let value = String(cString: appID)
    manager(data)?.windowEvent(window) { .appID(id: $0, value) }
}

private func windowState(_ data: UnsafeMutableRawPointer?, _ window: OpaquePointer?, _ flags: UInt32) {
    guard let window else { return }
    manager(data)?.windowEvent(window) { .state(id: $0, PlasmaWindowState(rawValue: flags)) }
}

private func windowPID(_ data: UnsafeMutableRawPointer?, _ window: OpaquePointer?, _ pid: UInt32) {
    guard let window else { return }
    manager(data)?.windowEvent(window) { .pid(id: $0, pid) }
}

private func windowInitialState(_ data: UnsafeMutableRawPointer?, _ window: OpaquePointer?) {
    guard let window else { return }
    manager(data)?.windowEvent(window) { .initialState(id: $0) }
}

private func windowUnmapped(_ data: UnsafeMutableRawPointer?, _ window: OpaquePointer?) {
    guard let window else { return }
    manager(data)?.unmapped(window)
}
