/// Why a Wayland connection could not be made or used.
public enum WaylandError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No compositor listens at the display's socket (`wl_display_connect` failed), with `errno`.
    case noCompositor(display: String, errno: Int32)
    /// The compositor does not offer the protocol (its global is not in the registry).
    case protocolNotOffered(String)
    /// The connection failed while in use (`wl_display_dispatch` and friends), with `errno`.
    case connectionLost(errno: Int32)

    /// The failure in words.
    public var description: String {
        switch self {
        case .noCompositor(let display, let errno): "no Wayland compositor at \(display) (errno \(errno))"
        case .protocolNotOffered(let name): "the compositor does not offer \(name)"
        case .connectionLost(let errno): "the Wayland connection was lost (errno \(errno))"
        }
    }
}
