#if canImport(Glibc)
import Glibc
#endif

/// A wall-clock time as a date and time of day, to the millisecond (rounded down): in the local
/// time zone through the C library's `localtime_r` (so every line notifywatch prints honours
/// `TZ` the same way, whatever form it takes), or in UTC through `gmtime_r`.
package struct LocalTime {
    /// Which time zone the date and time are in.
    package enum Zone {
        /// The process's (`TZ`, else `/etc/localtime`).
        case local
        /// UTC, written with `Z`.
        case utc
    }

    /// The date and time, and the milliseconds past the second.
    private let parts: tm
    private let millis: Int
    private let zone: Zone

    package init(_ time: WallTime, zone: Zone = .local) {
        var whole = time_t(time.seconds)
        millis = Int((time.nanoseconds - time.seconds * 1_000_000_000) / 1_000_000)
        var parts = tm()
        switch zone {
        case .local: localtime_r(&whole, &parts)
        case .utc: gmtime_r(&whole, &parts)
        }
        self.parts = parts
        self.zone = zone
    }

    /// `10:00:00.250`: the human output's time column.
    package var clock: String { format("%H:%M:%S") + "." + zeroPadded(millis, 3) }

    /// `2026-11-21T10:00:00.250+01:00` in the local time zone (for notifywatch's `--json` and log
    /// headers), `2026-11-21T09:00:00.250Z` in UTC (for notifybusd's events).
    package var rfc3339: String {
        let offset = Int(parts.tm_gmtoff)
        let zone = self.zone == .utc ? "Z"
            : (offset < 0 ? "-" : "+") + zeroPadded(abs(offset) / 3600, 2) + ":" + zeroPadded((abs(offset) % 3600) / 60, 2)
        return format("%Y-%m-%dT%H:%M:%S") + "." + zeroPadded(millis, 3) + zone
    }

    private func format(_ pattern: String) -> String {
        var parts = self.parts
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, pattern, &parts)
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
