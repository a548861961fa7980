#if canImport(Glibc)
import Glibc
#endif

/// A wall-clock time (`CLOCK_REALTIME`) in nanoseconds since the Unix epoch, and its RFC 3339
/// form in UTC with milliseconds (`2026-11-24T09:30:00.125Z`).
public struct WallTime: Sendable, Hashable, Comparable {
    /// Nanoseconds since 1970-01-01T00:00:00Z.
    public var nanoseconds: Int64

    /// The time `nanoseconds` after the epoch.
    public init(nanoseconds: Int64) {
        self.nanoseconds = nanoseconds
    }

    /// The wall clock now.
    public static func now() -> WallTime {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return WallTime(nanoseconds: Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec))
    }

    /// This time moved by `duration`.
    public func advanced(by duration: Duration) -> WallTime {
        let (seconds, attoseconds) = duration.components
        return WallTime(nanoseconds: nanoseconds &+ seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000)
    }

    /// The duration from `other` to this time.
    public func since(_ other: WallTime) -> Duration { .nanoseconds(nanoseconds &- other.nanoseconds) }

    /// Reads an RFC 3339 time (`2026-11-24T09:30:00.125Z`, `…+01:00`; fraction optional);
    /// `nil` when `text` is not one.
    public init?(rfc3339 text: String) {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[range] {
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard bytes.count >= 20, let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19)
        else { return nil }
        var index = 19
        var fraction: Int64 = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var scale: Int64 = 100_000_000
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                fraction += Int64(bytes[index] - 48) * scale
                scale /= 10
                index += 1
            }
        }
        guard index < bytes.count else { return nil }
        var offset = 0
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            break
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard let hours = number(index + 1..<index + 3), let minutes = number(index + 4..<index + 6) else { return nil }
            offset = (hours * 3600 + minutes * 60) * (bytes[index] == UInt8(ascii: "-") ? -1 : 1)
        default:
            return nil
        }
        let days = Self.daysSinceEpoch(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second - offset)
        self.init(nanoseconds: seconds * 1_000_000_000 + fraction)
    }

    /// RFC 3339 in UTC, with milliseconds.
    public var rfc3339: String {
        let seconds = nanoseconds >= 0 ? nanoseconds / 1_000_000_000 : (nanoseconds - 999_999_999) / 1_000_000_000
        let millis = Int((nanoseconds - seconds * 1_000_000_000) / 1_000_000)
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let fraction = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(fraction)Z"
    }

    /// Days from 1970-01-01 to the given civil date (proleptic Gregorian).
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Orders by the time.
    public static func < (lhs: WallTime, rhs: WallTime) -> Bool { lhs.nanoseconds < rhs.nanoseconds }
}
