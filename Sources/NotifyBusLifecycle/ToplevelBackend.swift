#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A source of toplevel windows on the loop thread: sway's IPC or the wlr protocol.
protocol ToplevelBackend: AnyObject {
    /// The compositor's PID (`SO_PEERCRED` of the socket), never to be frozen.
    var compositorPID: Int32? { get }
    /// Lets go of the connection; nothing is reported after it.
    func stop()
}

extension SwayToplevelWatcher: ToplevelBackend {}
extension WlrToplevelWatcher: ToplevelBackend {}

extension LifecycleDriver {
    /// Connects to the compositor as `configuration.toplevels` says: `sway` (sway's IPC), `wlr`
    /// (the wlr foreign-toplevel protocol), or `auto`: sway when `SWAYSOCK` is set and answers,
    /// else wlr.
    /// - Throws: the backend's error, which says why (no socket, IPC refused, the protocol not
    ///   offered).
    func makeBackend(onUpdate: @escaping (ToplevelUpdate) -> Void) throws -> any ToplevelBackend {
        switch configuration.toplevels {
        case .sway:
            return try SwayToplevelWatcher(context: context, socketPath: configuration.swaySocket, onUpdate: onUpdate)
        case .wlr:
            return try makeWlrBackend(onUpdate: onUpdate)
        case .auto:
            if configuration.swaySocket != nil || getenv("SWAYSOCK") != nil,
                let sway = try? SwayToplevelWatcher(context: context, socketPath: configuration.swaySocket, onUpdate: onUpdate)
            {
                return sway
            }
            return try makeWlrBackend(onUpdate: onUpdate)
        }
    }

    private func makeWlrBackend(onUpdate: @escaping (ToplevelUpdate) -> Void) throws -> any ToplevelBackend {
        try WlrToplevelWatcher(context: context, display: configuration.waylandDisplay, onUpdate: onUpdate)
    }
}
