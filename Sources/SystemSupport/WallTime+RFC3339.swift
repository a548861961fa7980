extension WallTime {
    /// An RFC 3339 date and time, `2026-11-21T09:00:00Z` or `2026-11-21T10:00:00.250+01:00`:
    /// a full date, `T`, a full time with optional fractional seconds (kept to the nanosecond,
    /// rounded down), and `Z` or a numeric offset (`t` and `z` in lower case too); `nil` for anything else, and for a time
    /// outside the years a `WallTime` holds (about 1678 to 2262).
    package init?(rfc3339 text: String) {
        var scanner = DigitScanner(Array(text.utf8))
        guard let year = scanner.number(digits: 4), scanner.skip("-"),
            let month = scanner.number(digits: 2), scanner.skip("-"),
            let day = scanner.number(digits: 2), scanner.skip("T") || scanner.skip("t"),
            let hour = scanner.number(digits: 2), scanner.skip(":"),
            let minute = scanner.number(digits: 2), scanner.skip(":"),
            let second = scanner.number(digits: 2)
        else { return nil }
        var fraction: Int64 = 0
        if scanner.skip(".") {
            var digits = 0
            var scale: Int64 = 100_000_000
            while let digit = scanner.digit() {
                fraction += Int64(digit) * scale
                scale /= 10
                digits += 1
            }
            guard digits > 0 else { return nil }
        }
        var offset = 0
        if !(scanner.skip("Z") || scanner.skip("z")) {
            let sign: Int
            if scanner.skip("+") { sign = 1 } else if scanner.skip("-") { sign = -1 } else { return nil }
            guard let hours = scanner.number(digits: 2), scanner.skip(":"), let minutes = scanner.number(digits: 2),
                hours < 24, minutes < 60
            else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        }
        guard scanner.isAtEnd, (1...12).contains(month), (1...CivilDate.daysIn(month: month, year: year)).contains(day),
            hour < 24, minute < 60, second < 60
        else { return nil }
        let days = CivilDate.daysSinceEpoch(year: year, month: month, day: day)
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second - offset)
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow, whole <= .max - fraction else { return nil }
        self.init(nanoseconds: whole + fraction)
    }

    /// RFC 3339 in UTC, with milliseconds (rounded down): `2026-11-24T09:30:00.125Z`.
    public var rfc3339: String { LocalTime(self, zone: .utc).rfc3339 }
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
