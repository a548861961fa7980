import CEpollLoop

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A one-shot timer on the wall clock (`CLOCK_REALTIME`) that also tells when the clock is set:
/// a `timerfd` armed with `TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET`.
///
/// The loop's own timers run on `CLOCK_BOOTTIME` and cannot fire "at midnight": this one fires
/// when the wall clock reaches a deadline, whatever happened to the clock meanwhile. When the
/// clock is set (by `settimeofday`, `clock_settime`, NTP stepping it), the armed timer is
/// cancelled and `read()` says `.clockSet`; it stays disarmed until `arm(at:)` again.
///
/// Register `fileDescriptor` for `.readable` with the loop and call `read()` when it is ready.
/// The descriptor is non-blocking and closed by `close()` (or `deinit`); deregister it first.
/// Use it on one thread.
package final class WallClockTimer {
    /// What `read()` found.
    package enum Expiration: Sendable, Hashable {
        /// The wall clock reached the deadline.
        case fired
        /// The wall clock was set (the kernel cancelled the timer, `ECANCELED`).
        case clockSet
        /// Nothing yet (a spurious wake-up, `EAGAIN`).
        case none
    }

    /// The timerfd, `-1` once closed.
    package private(set) var fileDescriptor: Int32

    /// Creates a disarmed timer. Wraps `timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC)`.
    /// - Throws: `EventLoopError.systemCall` when the kernel refuses.
    package init() throws(EventLoopError) {
        let fd = timerfd_create(CLOCK_REALTIME, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
        guard fd >= 0 else { throw .lastError("timerfd_create") }
        fileDescriptor = fd
    }

    deinit { close() }

    /// Arms the timer for the wall-clock time `seconds` (since the Unix epoch, UTC) plus
    /// `nanoseconds`, replacing any earlier deadline; a deadline in the past fires at once.
    /// Wraps `timerfd_settime` with `TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET`.
    /// - Throws: `EventLoopError.systemCall` (e.g. `ECANCELED` when the clock was set since the
    ///   last read: read, then arm again).
    package func arm(at seconds: Int64, nanoseconds: Int = 0) throws(EventLoopError) {
        guard fileDescriptor >= 0 else { throw .systemCall(operation: "timerfd_settime", errno: EBADF) }
        var spec = itimerspec()
        // Zero would disarm: the earliest deadline is one nanosecond past the epoch.
        spec.it_value.tv_sec = Int(max(seconds, 0))
        spec.it_value.tv_nsec = seconds <= 0 && nanoseconds <= 0 ? 1 : min(max(nanoseconds, 0), 999_999_999)
        let flags = Int32(TFD_TIMER_ABSTIME) | Int32(TFD_TIMER_CANCEL_ON_SET)
        guard timerfd_settime(fileDescriptor, flags, &spec, nil) == 0 else { throw .lastError("timerfd_settime") }
    }

    /// Disarms the timer (it then reports no clock change either). Wraps `timerfd_settime`.
    package func disarm() {
        guard fileDescriptor >= 0 else { return }
        var spec = itimerspec()
        _ = timerfd_settime(fileDescriptor, 0, &spec, nil)
    }

    /// Reads the timer: whether it fired, the clock was set, or nothing happened. Wraps `read`.
    /// - Throws: `EventLoopError.systemCall` for any other failure.
    package func read() throws(EventLoopError) -> Expiration {
        guard fileDescriptor >= 0 else { throw .systemCall(operation: "read(timerfd)", errno: EBADF) }
        var count: UInt64 = 0
        while true {
            let result = withUnsafeMutableBytes(of: &count) { readDescriptor(fileDescriptor, $0.baseAddress, $0.count) }
            if result == MemoryLayout<UInt64>.size { return .fired }
            let code = errno
            switch code {
            case EINTR: continue
            case ECANCELED: return .clockSet
            case EAGAIN: return .none
            default: throw .systemCall(operation: "read(timerfd)", errno: code)
            }
        }
    }

    /// Closes the descriptor; further calls do nothing or throw `EBADF`.
    package func close() {
        if fileDescriptor >= 0 { closeDescriptor(fileDescriptor) }
        fileDescriptor = -1
    }
}

/// `read(2)`, out of reach of the timer's own `read()`.
private func readDescriptor(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}

/// `close(2)`, out of reach of the timer's own `close()`.
private func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
}
