#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Wayland

/// A source of toplevel windows on the loop thread: sway's IPC, the wlr protocol or KDE's.
protocol ToplevelBackend: AnyObject {
    /// The compositor's PID (`SO_PEERCRED` of the socket), never to be frozen.
    var compositorPID: Int32? { get }
    /// Lets go of the connection; nothing is reported after it.
    func stop()
}

extension SwayToplevelWatcher: ToplevelBackend {}
extension WlrToplevelWatcher: ToplevelBackend {}
extension KdeToplevelWatcher: ToplevelBackend {}

extension LifecycleDriver {
    /// Connects to the compositor as `configuration.toplevels` says: `sway` (sway's IPC), `wlr`
    /// (the wlr foreign-toplevel protocol), `kde` (KDE's plasma-window-management protocol), or
    /// `auto`: sway when `SWAYSOCK` is set and answers, else the first of
    /// `org_kde_plasma_window_management` and `zwlr_foreign_toplevel_manager_v1` that the Wayland
    /// display offers (one connection, one read of its registry).
    /// - Throws: the backend's error, which says why (no socket, IPC refused, the protocol not
    ///   offered).
    func makeBackend(onUpdate: @escaping (ToplevelUpdate) -> Void) throws -> any ToplevelBackend {
        switch configuration.toplevels {
        case .sway:
            return try SwayToplevelWatcher(context: context, socketPath: configuration.swaySocket, onUpdate: onUpdate)
        case .wlr:
            return try WlrToplevelWatcher(context: context, display: configuration.waylandDisplay, onUpdate: onUpdate)
        case .kde:
            return try KdeToplevelWatcher(context: context, display: configuration.waylandDisplay, onUpdate: onUpdate)
        case .auto:
            if configuration.swaySocket != nil || getenv("SWAYSOCK") != nil,
                let sway = try? SwayToplevelWatcher(context: context, socketPath: configuration.swaySocket, onUpdate: onUpdate)
            {
                return sway
            }
            return try makeWaylandBackend(onUpdate: onUpdate)
        }
    }

    /// The Wayland backend the display offers a protocol for: KDE's first, then wlr's.
    /// - Throws: `WaylandError.protocolNotOffered` naming both when it offers neither.
    private func makeWaylandBackend(onUpdate: @escaping (ToplevelUpdate) -> Void) throws(WaylandError) -> any ToplevelBackend {
        let connection = try WaylandDisplay(name: configuration.waylandDisplay)
        do throws(WaylandError) {
            try connection.roundtrip(timeout: WlrToplevelWatcher.registryTimeout)
        } catch {
            connection.close()
            throw error
        }
        if connection.global(named: PlasmaWindowManager.interfaceName) != nil {
            return try KdeToplevelWatcher(context: context, connection: connection, onUpdate: onUpdate)
        }
        if connection.global(named: ForeignToplevelManager.interfaceName) != nil {
            return try WlrToplevelWatcher(context: context, connection: connection, onUpdate: onUpdate)
        }
        connection.close()
        throw .protocolNotOffered("\(PlasmaWindowManager.interfaceName) or \(ForeignToplevelManager.interfaceName)")
    }
}
