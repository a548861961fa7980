#if canImport(Glibc)
import Glibc
#endif

/// A wall-clock time (`CLOCK_REALTIME`) in nanoseconds since the Unix epoch: when a bus started,
/// the `time` of notifybusd's events, the times notifywatch prints and records. Its RFC 3339
/// forms are in `WallTime+RFC3339.swift` (UTC) and `LocalTime` (the local time zone).
public struct WallTime: Sendable, Hashable, Comparable {
    /// Nanoseconds since 1970-01-01T00:00:00Z.
    package var nanoseconds: Int64

    /// The time `nanoseconds` after the epoch.
    package init(nanoseconds: Int64) {
        self.nanoseconds = nanoseconds
    }

    /// The wall clock now. Wraps `clock_gettime`.
    public static func now() -> WallTime {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return WallTime(nanoseconds: Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec))
    }

    /// Whole seconds since the epoch, rounded down.
    package var seconds: Int64 { floorDivide(nanoseconds, 1_000_000_000) }

    /// This time moved by `duration`.
    package func advanced(by duration: Duration) -> WallTime {
        let (seconds, attoseconds) = duration.components
        return WallTime(nanoseconds: nanoseconds &+ seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000)
    }

    /// This time moved by `seconds`, to the nearest nanosecond (a move past what 64 bits of
    /// nanoseconds hold, about 292 years, is cut to that).
    package func advanced(bySeconds seconds: Double) -> WallTime {
        let delta = (seconds * 1e9).rounded()
        return WallTime(nanoseconds: nanoseconds &+ (Int64(exactly: delta) ?? (delta < 0 ? .min : .max)))
    }

    /// The duration from `other` to this time.
    package func since(_ other: WallTime) -> Duration { .nanoseconds(nanoseconds &- other.nanoseconds) }

    /// Orders by the time.
    public static func < (lhs: WallTime, rhs: WallTime) -> Bool { lhs.nanoseconds < rhs.nanoseconds }
}
