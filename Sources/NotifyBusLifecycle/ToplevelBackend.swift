#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A source of toplevel windows on the loop thread: sway's IPC, the wlr protocol or KDE's.
protocol ToplevelBackend: AnyObject {
    /// The compositor's PID (`SO_PEERCRED` of the socket), never to be frozen.
    var compositorPID: Int32? { get }
    /// Lets go of the connection; nothing is reported after it.
    func stop()
}

extension SwayToplevelWatcher: ToplevelBackend {}
extension ToplevelWatcher: ToplevelBackend {}

extension LifecycleDriver {
    /// Connects to the compositor as `configuration.toplevels` says: `sway` (sway's IPC), `wlr`
    /// (the wlr foreign-toplevel protocol), `kde` (KDE's plasma-window-management protocol), or
    /// `auto`: sway when `SWAYSOCK` is set and answers, else the first of
    /// `org_kde_plasma_window_management` and `zwlr_foreign_toplevel_manager_v1` that the Wayland
    /// display offers (one connection, one read of its registry, on the loop).
    /// - Throws: the backend's error, which says why (no socket, IPC refused); a protocol not
    ///   offered comes as `.lost(reason:)` once the registry is read.
    func makeBackend(onUpdate: @escaping (ToplevelUpdate) -> Void) throws -> any ToplevelBackend {
        let display = configuration.waylandDisplay
        switch configuration.toplevels {
        case .sway:
            return try SwayToplevelWatcher(context: context, socketPath: configuration.swaySocket, onUpdate: onUpdate)
        case .wlr:
            return try WaylandToplevelBackend(context: context, display: display, protocols: [.wlr], onUpdate: onUpdate)
        case .kde:
            return try WaylandToplevelBackend(context: context, display: display, protocols: [.kde], onUpdate: onUpdate)
        case .auto:
            if configuration.swaySocket != nil || getenv("SWAYSOCK") != nil,
                let sway = try? SwayToplevelWatcher(context: context, socketPath: configuration.swaySocket, onUpdate: onUpdate)
            {
                return sway
            }
            return try WaylandToplevelBackend(context: context, display: display, protocols: [.kde, .wlr], onUpdate: onUpdate)
        }
    }
}
