#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Wall-clock times in the local time zone, as notifywatch prints them, through the C library's
/// `localtime_r` (so every line honours `TZ` the same way, whatever form it takes).
struct LocalTime {
    /// The local date and time, and the milliseconds past the second (rounded down).
    private let parts: tm
    private let millis: Int

    init(_ date: Date) {
        let seconds = date.timeIntervalSince1970
        var whole = time_t(seconds.rounded(.down))
        millis = min(999, Int(((seconds - Double(whole)) * 1000).rounded(.down)))
        var parts = tm()
        localtime_r(&whole, &parts)
        self.parts = parts
    }

    /// `10:00:00.250`: the human output's time column.
    var clock: String { format("%H:%M:%S") + String(format: ".%03d", millis) }

    /// `2026-11-21T10:00:00.250+01:00`: RFC 3339 with the local offset, for `--json` and log headers.
    var rfc3339: String {
        let offset = Int(parts.tm_gmtoff)
        let zone = (offset < 0 ? "-" : "+") + String(format: "%02d:%02d", abs(offset) / 3600, (abs(offset) % 3600) / 60)
        return format("%Y-%m-%dT%H:%M:%S") + String(format: ".%03d", millis) + zone
    }

    private func format(_ pattern: String) -> String {
        var parts = self.parts
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, pattern, &parts)
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
