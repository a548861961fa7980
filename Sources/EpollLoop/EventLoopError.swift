#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why an event-loop operation failed.
public enum EventLoopError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A system call failed: which one, and its `errno`.
    case systemCall(operation: String, errno: Int32)
    /// The loop has shut down (or is shutting down) and accepts no more work.
    case shutDown
    /// The registration or timer is not (or no longer) known to this loop.
    case unknownHandle

    /// What failed, in words (with the system's text for an `errno`).
    public var description: String {
        switch self {
        case .systemCall(let operation, let code):
            let text = strerror(code).map { String(cString: $0) } ?? "unknown error"
            return "\(operation): \(text) (errno \(code))"
        case .shutDown:
            return "the event loop has shut down"
        case .unknownHandle:
            return "the registration or timer is not known to this event loop"
        }
    }

    /// The error for a system call that failed and left its reason in `errno`.
    static func lastError(_ operation: String) -> EventLoopError {
        .systemCall(operation: operation, errno: errno)
    }
}
