import CForeignToplevel
import CWaylandClient
package import EpollLoop

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Globals, errors, names, peers and times, for the connection.
extension WaylandDisplay {
    /// The first global offering `interface`, if the compositor announced one.
    package func global(named interface: String) -> WaylandGlobal? {
        globals.values.filter { $0.interface == interface }.min { $0.name < $1.name }
    }

    /// The connection's error: a protocol error with its interface and code, else `errno`
    /// (`fallback` when libwayland recorded none). Wraps `wl_display_get_error` and
    /// `wl_display_get_protocol_error`.
    func currentError(_ fallback: Int32) -> WaylandError {
        let code = wl_display_get_error(display)
        if code == EPROTO {
            var interface: UnsafePointer<wl_interface>?
            var id: UInt32 = 0
            let protocolCode = wl_display_get_protocol_error(display, &interface, &id)
            let name = interface.flatMap { $0.pointee.name.map { String(cString: $0) } } ?? "the display"
            return .protocolError(interface: name, code: protocolCode)
        }
        return .connectionLost(errno: code != 0 ? code : fallback)
    }

    /// `name`, else `$WAYLAND_DISPLAY`, else `wayland-0`: libwayland's choice without
    /// `$WAYLAND_SOCKET`.
    static func resolvedName(_ name: String?) -> String {
        if let name, !name.isEmpty { return name }
        if let value = getenv("WAYLAND_DISPLAY"), value.pointee != 0 { return String(cString: value) }
        return "wayland-0"
    }

    /// The process at the other end of a Unix socket (`getsockopt` with `SO_PEERCRED`, whose
    /// `struct ucred` is a pid and a uid and gid of 32 bits each).
    static func peerPID(of socket: Int32) -> Int32? {
        var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout<(Int32, UInt32, UInt32)>.size)
        guard getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0, credentials.pid > 0 else {
            return nil
        }
        return credentials.pid
    }

    /// A duration in whole milliseconds, rounded up.
    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
    }

}

extension WaylandDisplay {
    /// Makes `afterEvents` and `onFailure` the connection's: handed over when the connection is
    /// watched already (its registry read on the loop), else its socket put on `context`'s loop.
    /// - Throws: what `watch(on:afterEvents:onFailure:)` throws.
    package func attach(
        on context: LoopContext, afterEvents: @escaping () -> Void, onFailure: @escaping (WaylandError) -> Void
    ) throws(WaylandError) {
        if isWatched {
            handOver(afterEvents: afterEvents, onFailure: onFailure)
        } else {
            try watch(on: context, afterEvents: afterEvents, onFailure: onFailure)
        }
    }
}

extension WaylandDisplay {
    /// Connects to `name` (as `init(name:)`) and reads its registry with a round trip of at most
    /// `timeout`; closed again when that fails.
    /// - Throws: what `init(name:)` and `roundtrip(timeout:)` throw.
    package convenience init(registryOf name: String?, timeout: Duration) throws(WaylandError) {
        try self.init(name: name)
        do throws(WaylandError) {
            try roundtrip(timeout: timeout)
        } catch {
            close()
            throw error
        }
    }
}
