#if canImport(Glibc)
import Glibc
#endif

/// A wall-clock instant: seconds since 2001-01-01T00:00:00Z in a `Double`, as Foundation's `Date`
/// keeps them, so that sums and the milliseconds derived from them round as `Date`'s do.
struct WallTime: Sendable, Equatable {
    /// Seconds from 1970-01-01 to 2001-01-01 (UTC).
    static let referenceOffset: Double = 978_307_200

    var sinceReferenceDate: Double

    init(sinceReferenceDate: Double) {
        self.sinceReferenceDate = sinceReferenceDate
    }

    /// The system's real-time clock (`CLOCK_REALTIME`).
    static func now() -> WallTime {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return WallTime(sinceReferenceDate: Double(now.tv_sec) - referenceOffset + 1.0e-9 * Double(now.tv_nsec))
    }

    /// Seconds since 1970-01-01T00:00:00Z.
    var sinceEpoch: Double { sinceReferenceDate + Self.referenceOffset }

    /// This instant `seconds` later.
    func adding(_ seconds: Double) -> WallTime {
        WallTime(sinceReferenceDate: sinceReferenceDate + seconds)
    }

    /// An RFC 3339 date and time, `2026-11-21T09:00:00Z` or `2026-11-21T10:00:00.250+01:00`:
    /// a full date, `T`, a full time with optional fractional seconds (kept to the millisecond,
    /// rounded down), and `Z` or a numeric offset; `nil` for anything else.
    init?(rfc3339 text: String) {
        var scanner = DigitScanner(Array(text.utf8))
        guard let year = scanner.number(digits: 4), scanner.skip("-"),
            let month = scanner.number(digits: 2), scanner.skip("-"),
            let day = scanner.number(digits: 2), scanner.skip("T"),
            let hour = scanner.number(digits: 2), scanner.skip(":"),
            let minute = scanner.number(digits: 2), scanner.skip(":"),
            let second = scanner.number(digits: 2)
        else { return nil }
        var millis = 0
        if scanner.skip(".") {
            var digits = 0
            while let digit = scanner.digit() {
                if digits < 3 { millis = millis * 10 + digit }
                digits += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 3) { millis *= 10 }
        }
        var offset = 0
        if !scanner.skip("Z") {
            let sign: Int
            if scanner.skip("+") { sign = 1 } else if scanner.skip("-") { sign = -1 } else { return nil }
            guard let hours = scanner.number(digits: 2), scanner.skip(":"), let minutes = scanner.number(digits: 2),
                hours < 24, minutes < 60
            else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        }
        guard scanner.isAtEnd, (1...12).contains(month), (1...Self.days(inMonth: month, year: year)).contains(day),
            hour < 24, minute < 60, second < 60
        else { return nil }
        let days = Self.daysSinceEpoch(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second - offset)
        // Whole milliseconds since 1970, then seconds since 2001, in that order.
        let epochMillis = Double(seconds * 1000 + Int64(millis))
        self.init(sinceReferenceDate: epochMillis / 1000 - Self.referenceOffset)
    }

    private static func days(inMonth month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to the given date of the proleptic Gregorian calendar.
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

/// Reads ASCII digits and separators from UTF-8 text.
private struct DigitScanner {
    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { index == bytes.count }

    /// The next byte's value if it is a digit, consumed.
    mutating func digit() -> Int? {
        guard index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) else { return nil }
        defer { index += 1 }
        return Int(bytes[index] - UInt8(ascii: "0"))
    }

    /// Exactly `digits` digits, as a number.
    mutating func number(digits: Int) -> Int? {
        var value = 0
        for _ in 0..<digits {
            guard let digit = digit() else { return nil }
            value = value * 10 + digit
        }
        return value
    }

    /// Consumes `separator` if it comes next.
    mutating func skip(_ separator: Unicode.Scalar) -> Bool {
        guard index < bytes.count, bytes[index] == UInt8(ascii: separator) else { return false }
        index += 1
        return true
    }
}
