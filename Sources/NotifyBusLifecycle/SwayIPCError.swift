package import EpollLoop
import SystemSupport

#if canImport(Glibc)
import Glibc
#endif

/// Why sway's IPC could not be used: the connection could not be made, or what came over it was
/// not sway's IPC.
package enum SwayIPCError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No socket path was given and `SWAYSOCK` is not set (sway is not running, or this process
    /// was not started from it).
    case noSocketPath
    /// The socket path is longer than a Unix socket address holds (107 bytes).
    case socketPathTooLong(String)
    /// Connecting to the socket at `path` failed: `ECONNREFUSED` (nobody listens there), `ENOENT`
    /// (no socket there), `EACCES`, `EAGAIN` (sway's backlog is full).
    case connectFailed(path: String, errno: Int32)
    /// A system call on the socket failed: which one, and its `errno`.
    case systemCall(operation: String, errno: Int32)
    /// The loop would not watch the socket.
    case loop(EventLoopError)
    /// A message did not start with sway's magic `i3-ipc`: the peer is not sway.
    case badMagic
    /// A message announced a payload of `length` bytes, more than the `limit` read.
    case messageTooLarge(length: UInt32, limit: Int)

    /// What went wrong, in words (with the system's text for an `errno`).
    package var description: String {
        switch self {
        case .noSocketPath:
            return "no sway IPC socket: none given and SWAYSOCK is not set"
        case .socketPathTooLong(let path):
            return "the sway IPC socket path is too long for a Unix socket address: \(path)"
        case .connectFailed(let path, let code):
            return "cannot connect to the sway IPC socket \(path): \(Self.text(of: code)) (errno \(code))"
        case .systemCall(let operation, let code):
            return "\(operation) on the sway IPC socket: \(Self.text(of: code)) (errno \(code))"
        case .loop(let error):
            return "cannot watch the sway IPC socket: \(error)"
        case .badMagic:
            return "the peer is not sway: a message did not start with the magic \"i3-ipc\""
        case .messageTooLarge(let length, let limit):
            return "sway sent a message of \(length) bytes, more than the \(limit) read"
        }
    }

    /// The system's text for `code`.
    private static func text(of code: Int32) -> String {
        ErrnoText.of(code)
    }
}
