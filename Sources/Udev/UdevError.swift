#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A libudev call that failed: which one, and the `errno` it reported.
public struct UdevError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The libudev function that failed, for example `udev_monitor_new_from_netlink`.
    public var operation: String
    /// The error number it reported (`ENOMEM`, `EACCES`, …).
    public var errno: Int32

    /// The operation and the system's text for the error number, e.g.
    /// `udev_enumerate_scan_devices: Permission denied (errno 13)`.
    public var description: String {
        let text = strerror(errno).map { String(cString: $0) } ?? "unknown error"
        return "\(operation): \(text) (errno \(errno))"
    }
}

extension UdevError {
    /// The error for a C call that returned `NULL` and left its reason in `errno`.
    static func fromErrno(_ operation: String, default fallback: Int32 = ENOMEM) -> UdevError {
        let code = currentErrno()
        return UdevError(operation: operation, errno: code == 0 ? fallback : code)
    }

    /// The error for a C call that returned a negative error number (libudev's convention for `int`).
    static func fromResult(_ operation: String, _ result: Int32) -> UdevError {
        UdevError(operation: operation, errno: result < 0 ? -result : EIO)
    }
}

/// The calling thread's `errno`.
@inline(__always)
func currentErrno() -> Int32 { errno }

/// Clears the calling thread's `errno` before a call that reports failure only through it.
@inline(__always)
func clearErrno() { errno = 0 }
