import SystemSupport

/// A POSIX `TZ` rule such as `CET-1CEST,M3.5.0,M10.5.0/3`: what a TZif footer says for times
/// past the file's table (RFC 8536 §3.3, with its extensions: hours up to ±167 in rule times,
/// and `<+14>-14`-style quoted names).
public struct PosixTimeZone: Sendable, Hashable {
    /// The day a daylight-saving change happens on, in a given year.
    public enum Day: Sendable, Hashable {
        /// `Jn`: day 1–365, February 29 never counted.
        case julian(Int)
        /// `n`: day 0–365, counting February 29.
        case zeroBased(Int)
        /// `Mm.w.d`: weekday `d` (0 = Sunday) of week `w` (1–4, 5 = the last) of month `m`.
        case monthWeekDay(month: Int, week: Int, weekday: Int)
    }

    /// When a change happens: a day and the local time of day (seconds, may be negative or past
    /// a day).
    public struct Rule: Sendable, Hashable {
        /// The day.
        public var day: Day
        /// Seconds after local midnight of that day, in the time that is ending.
        public var time: Int
    }

    /// Daylight-saving time: its offset and when it starts and ends.
    public struct DaylightSaving: Sendable, Hashable {
        /// Seconds east of UTC.
        public var offset: Int
        /// When it starts (a local standard time).
        public var start: Rule
        /// When it ends (a local daylight-saving time).
        public var end: Rule
    }

    /// Standard time: seconds east of UTC.
    public let standardOffset: Int
    /// Daylight-saving time; `nil` for a zone without it.
    public let daylightSaving: DaylightSaving?

    /// Reads a `TZ` string.
    /// - Throws: `TimeZoneRules.FormatError` saying what is wrong.
    public init(_ text: String) throws(TimeZoneRules.FormatError) {
        var scanner = Scanner(Array(text.utf8))
        try scanner.name()
        // POSIX offsets count west of UTC: "CET-1" is one hour east.
        standardOffset = -(try scanner.duration(signed: true))
        if scanner.atEnd {
            daylightSaving = nil
            return
        }
        try scanner.name()
        var offset = standardOffset + 3600
        if let next = scanner.peek, next != UInt8(ascii: ",") {
            offset = -(try scanner.duration(signed: true))
        }
        if scanner.atEnd {
            // POSIX leaves the default open; the United States' rules are what tzcode uses.
            daylightSaving = DaylightSaving(
                offset: offset, start: Rule(day: .monthWeekDay(month: 3, week: 2, weekday: 0), time: 7200),
                end: Rule(day: .monthWeekDay(month: 11, week: 1, weekday: 0), time: 7200))
            return
        }
        try scanner.expect(",")
        let start = try scanner.rule()
        try scanner.expect(",")
        let end = try scanner.rule()
        guard scanner.atEnd else { throw .init("unexpected text after the rules") }
        daylightSaving = DaylightSaving(offset: offset, start: start, end: end)
    }

    /// The local time type at `time` (seconds since the epoch, UTC).
    public func localTimeType(at time: Int64) -> TimeZoneRules.LocalTimeType {
        let standard = TimeZoneRules.LocalTimeType(utcOffset: standardOffset, isDaylightSaving: false)
        guard let daylightSaving else { return standard }
        let year = CivilDate(daysSinceEpoch: floorDivide(time + Int64(standardOffset), 86_400)).year
        var state = standard
        for (moment, isDaylight) in changes(years: (year - 1)...(year + 1)) where moment <= time {
            state = .init(utcOffset: isDaylight ? daylightSaving.offset : standardOffset, isDaylightSaving: isDaylight)
        }
        return state
    }

    /// The first change after `time` (seconds since the epoch, UTC); `nil` without daylight-saving time.
    public func nextTransition(after time: Int64) -> Int64? {
        guard daylightSaving != nil else { return nil }
        let year = CivilDate(daysSinceEpoch: floorDivide(time + Int64(standardOffset), 86_400)).year
        return changes(years: (year - 1)...(year + 2)).first { $0.time > time }?.time
    }

    /// The changes in `years`, ascending: when (UTC) and whether daylight-saving time begins.
    private func changes(years: ClosedRange<Int>) -> [(time: Int64, isDaylight: Bool)] {
        guard let rules = daylightSaving else { return [] }
        var result: [(time: Int64, isDaylight: Bool)] = []
        for year in years {
            // The start is given in standard time, the end in daylight-saving time.
            result.append((Self.localSeconds(rules.start, year: year) - Int64(standardOffset), true))
            result.append((Self.localSeconds(rules.end, year: year) - Int64(rules.offset), false))
        }
        return result.sorted { $0.time < $1.time }
    }

    /// The local seconds since the epoch at which `rule` falls in `year`.
    static func localSeconds(_ rule: Rule, year: Int) -> Int64 {
        let january1 = CivilDate.daysSinceEpoch(year: year, month: 1, day: 1)
        let days: Int64
        switch rule.day {
        case .julian(let n):
            days = january1 + Int64(n - 1) + (CivilDate.isLeap(year) && n >= 60 ? 1 : 0)
        case .zeroBased(let n):
            days = january1 + Int64(n)
        case .monthWeekDay(let month, let week, let weekday):
            let first = CivilDate.daysSinceEpoch(year: year, month: month, day: 1)
            let firstWeekday = Int(((first + 4) % 7 + 7) % 7)  // 1970-01-01 is a Thursday (4)
            var day = 1 + (weekday - firstWeekday + 7) % 7 + (week - 1) * 7
            let length = CivilDate.daysIn(month: month, year: year)
            while day > length { day -= 7 }
            days = first + Int64(day - 1)
        }
        return days * 86_400 + Int64(rule.time)
    }
}

/// Reads the pieces of a POSIX `TZ` string.
private struct Scanner {
    let bytes: [UInt8]
    var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { position >= bytes.count }
    var peek: UInt8? { atEnd ? nil : bytes[position] }

    mutating func expect(_ character: Unicode.Scalar) throws(TimeZoneRules.FormatError) {
        guard peek == UInt8(ascii: character) else { throw .init("expected '\(character)' at \(position)") }
        position += 1
    }

    /// A zone abbreviation: three or more letters, or anything between `<` and `>`.
    mutating func name() throws(TimeZoneRules.FormatError) {
        if peek == UInt8(ascii: "<") {
            guard let close = bytes[position...].firstIndex(of: UInt8(ascii: ">")) else { throw .init("unclosed '<'") }
            position = close + 1
            return
        }
        let start = position
        while let byte = peek, (byte | 0x20) >= UInt8(ascii: "a"), (byte | 0x20) <= UInt8(ascii: "z") { position += 1 }
        guard position - start >= 3 else { throw .init("zone abbreviation expected at \(start)") }
    }

    /// `[+-]hh[:mm[:ss]]` in seconds.
    mutating func duration(signed: Bool) throws(TimeZoneRules.FormatError) -> Int {
        var sign = 1
        if let byte = peek, byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") {
            guard signed else { throw .init("sign not allowed at \(position)") }
            sign = byte == UInt8(ascii: "-") ? -1 : 1
            position += 1
        }
        let hours = try number(maximum: 167)
        var seconds = hours * 3600
        if peek == UInt8(ascii: ":") {
            position += 1
            seconds += try number(maximum: 59) * 60
            if peek == UInt8(ascii: ":") {
                position += 1
                seconds += try number(maximum: 59)
            }
        }
        return sign * seconds
    }

    /// `Jn`, `n` or `Mm.w.d`, then an optional `/time`.
    mutating func rule() throws(TimeZoneRules.FormatError) -> PosixTimeZone.Rule {
        let day: PosixTimeZone.Day
        if peek == UInt8(ascii: "J") {
            position += 1
            let n = try number(maximum: 365)
            guard n >= 1 else { throw .init("Julian day 0") }
            day = .julian(n)
        } else if peek == UInt8(ascii: "M") {
            position += 1
            let month = try number(maximum: 12)
            try expect(".")
            let week = try number(maximum: 5)
            try expect(".")
            let weekday = try number(maximum: 6)
            guard month >= 1, week >= 1 else { throw .init("month or week 0") }
            day = .monthWeekDay(month: month, week: week, weekday: weekday)
        } else {
            day = .zeroBased(try number(maximum: 365))
        }
        var time = 7200
        if peek == UInt8(ascii: "/") {
            position += 1
            time = try duration(signed: true)
        }
        return .init(day: day, time: time)
    }

    private mutating func number(maximum: Int) throws(TimeZoneRules.FormatError) -> Int {
        let start = position
        var value = 0
        while let byte = peek, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), position - start < 4 {
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
            position += 1
        }
        guard position > start else { throw .init("number expected at \(start)") }
        guard value <= maximum else { throw .init("\(value) out of range at \(start)") }
        return value
    }
}
