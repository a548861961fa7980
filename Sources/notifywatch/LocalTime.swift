#if canImport(Glibc)
import Glibc
#endif

/// Wall-clock times in the local time zone, as notifywatch prints them, through the C library's
/// `localtime_r` (so every line honours `TZ` the same way, whatever form it takes).
struct LocalTime {
    /// The local date and time, and the milliseconds past the second (rounded down).
    private let parts: tm
    private let millis: Int

    init(_ time: WallTime) {
        let seconds = time.sinceEpoch
        var whole = time_t(seconds.rounded(.down))
        millis = min(999, Int(((seconds - Double(whole)) * 1000).rounded(.down)))
        var parts = tm()
        localtime_r(&whole, &parts)
        self.parts = parts
    }

    /// `10:00:00.250`: the human output's time column.
    var clock: String { format("%H:%M:%S") + "." + zeroPadded(millis, 3) }

    /// `2026-11-21T10:00:00.250+01:00`: RFC 3339 with the local offset, for `--json` and log headers.
    var rfc3339: String {
        let offset = Int(parts.tm_gmtoff)
        let zone = (offset < 0 ? "-" : "+") + zeroPadded(abs(offset) / 3600, 2) + ":" + zeroPadded((abs(offset) % 3600) / 60, 2)
        return format("%Y-%m-%dT%H:%M:%S") + "." + zeroPadded(millis, 3) + zone
    }

    private func format(_ pattern: String) -> String {
        var parts = self.parts
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, pattern, &parts)
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// `value` in decimal, with leading zeros to at least `width` digits (as `%0*d`).
func zeroPadded(_ value: Int, _ width: Int) -> String {
    let digits = String(value.magnitude)
    let zeros = String(repeating: "0", count: max(0, width - digits.count - (value < 0 ? 1 : 0)))
    return (value < 0 ? "-" : "") + zeros + digits
}

/// `value` with three decimals, as `String(format: "%.3f", value)` (the C library's rounding).
func threeDecimals(_ value: Double) -> String {
    var buffer = [CChar](repeating: 0, count: 512)
    let count = withVaList([value]) { vsnprintf(&buffer, buffer.count, "%.3f", $0) }
    guard count >= 0 else { return "" }
    return String(decoding: buffer[0..<min(Int(count), buffer.count - 1)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
