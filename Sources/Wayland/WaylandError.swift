#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a Wayland connection could not be made or used.
package enum WaylandError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No compositor listens at the display's socket (`wl_display_connect` failed), with `errno`.
    case noCompositor(display: String, errno: Int32)
    /// The compositor does not offer the protocol (its global is not in the registry).
    case protocolNotOffered(String)
    /// The connection failed while in use (`wl_display_dispatch` and friends), with `errno`.
    case connectionLost(errno: Int32)
    /// The compositor ended the connection over a protocol error (`wl_display_get_error` is
    /// `EPROTO`): the interface of the offending object and the interface's error code
    /// (`wl_display_get_protocol_error`).
    case protocolError(interface: String, code: UInt32)
    /// The compositor did not answer `operation` (a round trip, say) within `milliseconds`.
    case noAnswer(operation: String, milliseconds: Int64)
    /// libwayland could not make a proxy for `operation` (out of memory, or the connection is
    /// already broken).
    case requestFailed(operation: String)
    /// The event loop cannot watch the connection's socket, and why.
    case loopUnavailable(String)

    /// The failure in words.
    package var description: String {
        switch self {
        case .noCompositor(let display, let errno): "no Wayland compositor at \(display) (\(Self.text(errno)))"
        case .protocolNotOffered(let name): "the compositor does not offer \(name)"
        case .connectionLost(let errno): "the Wayland connection was lost (\(Self.text(errno)))"
        case .protocolError(let interface, let code): "the compositor reported protocol error \(code) on \(interface)"
        case .noAnswer(let operation, let milliseconds): "the compositor did not answer \(operation) within \(milliseconds) ms"
        case .requestFailed(let operation): "libwayland could not send \(operation)"
        case .loopUnavailable(let reason): "the event loop cannot watch the Wayland connection: \(reason)"
        }
    }

    /// `strerror`'s words for `code`, with the number.
    private static func text(_ code: Int32) -> String {
        guard let words = strerror(code) else { return "errno \(code)" }
        return "\(String(cString: words)), errno \(code)"
    }
}
