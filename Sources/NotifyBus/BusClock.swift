#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where a bus takes the time of an event: a `Duration` since the bus started.
///
/// Every call that takes `at:` (publish, subscribe, suspend, resume) uses the
/// given time instead, which is how a replay runs on a virtual clock.
public struct BusClock: Sendable {
    private enum Source: Sendable {
        #if canImport(Glibc) || canImport(Musl)
        /// `CLOCK_BOOTTIME` nanoseconds since `start`.
        case bootTime(start: Int64)
        #else
        case continuous(start: ContinuousClock.Instant)
        #endif
        case reader(@Sendable () -> Duration)
    }

    private let source: Source

    /// A clock read by `now`.
    public init(now: @escaping @Sendable () -> Duration) { source = .reader(now) }

    private init(_ source: Source) { self.source = source }

    /// Reads the current time.
    ///
    /// The system clock is read in line, not through a stored closure: calling a closure kept in
    /// the bus retains and releases its context on every publish.
    @inline(__always)
    public func now() -> Duration {
        switch source {
        #if canImport(Glibc) || canImport(Musl)
        case .bootTime(let start):
            return .nanoseconds(bootTimeNanoseconds() &- start)
        #else
        case .continuous(let start):
            return ContinuousClock.now - start
        #endif
        case .reader(let read):
            return read()
        }
    }

    /// Time since this call on the monotonic clock that keeps counting while the machine sleeps.
    ///
    /// On Linux that is `CLOCK_BOOTTIME`, read with `clock_gettime` (through the vDSO, no system
    /// call), the clock `ContinuousClock` reads there too; reading it directly as nanoseconds skips
    /// the `ContinuousClock.Instant` arithmetic, about a quarter of the cost of a read. Elsewhere it
    /// is `ContinuousClock`.
    public static func continuous() -> BusClock {
        #if canImport(Glibc) || canImport(Musl)
        BusClock(.bootTime(start: bootTimeNanoseconds()))
        #else
        BusClock(.continuous(start: ContinuousClock.now))
        #endif
    }

    /// A clock that always reads zero, for callers that pass `at:` themselves.
    public static let zero = BusClock { .zero }
}

#if canImport(Glibc) || canImport(Musl)
/// `CLOCK_BOOTTIME` in nanoseconds (`clock_gettime`). It cannot fail for this clock on Linux ≥ 2.6.39;
/// were it to, the result is 0 and the bus clock stands still rather than stopping the process.
@inline(__always)
private func bootTimeNanoseconds() -> Int64 {
    var time = timespec()
    _ = clock_gettime(CLOCK_BOOTTIME, &time)
    return Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
}
#endif
