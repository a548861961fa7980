import SystemSupport

/// A time zone's offsets from UTC over time, read from its TZif data (RFC 8536, as in
/// `/usr/share/zoneinfo`): the table of transitions, and the footer's POSIX TZ rule for times
/// past the table.
///
/// Pure Swift, no C library time functions (`localtime_r` would need `TZ`, a process-global
/// variable). Version 2 and later files are read from their 64-bit section, version 1 files
/// from the 32-bit one. Leap-second records are skipped (the zone database's `right/` zones
/// are not meant for system clocks).
///
/// ```swift
/// let berlin = try TimeZoneRules(contentsOfFile: "/usr/share/zoneinfo/Europe/Berlin")
/// berlin.offset(at: 1_711_846_800)            // 7200: CEST, 2024-03-31T01:00:00Z
/// berlin.nextTransition(after: 1_711_846_800) // 1_729_990_800: 2024-10-27T01:00:00Z
/// ```
public struct TimeZoneRules: Sendable, Hashable {
    /// A local time type: its offset from UTC and whether it is daylight-saving time.
    public struct LocalTimeType: Sendable, Hashable {
        /// Seconds east of UTC.
        public var utcOffset: Int
        /// Whether it is daylight-saving time.
        public var isDaylightSaving: Bool

        /// Creates a local time type.
        public init(utcOffset: Int, isDaylightSaving: Bool) {
            self.utcOffset = utcOffset
            self.isDaylightSaving = isDaylightSaving
        }
    }

    /// Why TZif data cannot be read.
    public struct FormatError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong.
        public var description: String

        /// An error saying what is wrong.
        public init(_ description: String) { self.description = description }
    }

    /// Transition times (seconds since the epoch, UTC), ascending.
    public let transitions: [Int64]
    /// The local time type that starts at each transition (parallel to `transitions`).
    public let transitionTypes: [LocalTimeType]
    /// The local time type before the first transition (type 0 of the file).
    public let initialType: LocalTimeType
    /// The footer's rule for times at and after the last transition; `nil` when the file has none.
    public let footer: PosixTimeZone?

    /// UTC: no transitions, offset 0.
    public static let utc = TimeZoneRules(
        transitions: [], transitionTypes: [], initialType: .init(utcOffset: 0, isDaylightSaving: false), footer: nil)

    /// Rules from their parts; `transitions` ascending, `transitionTypes` as many.
    public init(transitions: [Int64], transitionTypes: [LocalTimeType], initialType: LocalTimeType, footer: PosixTimeZone?) {
        let count = min(transitions.count, transitionTypes.count)
        self.transitions = Array(transitions.prefix(count))
        self.transitionTypes = Array(transitionTypes.prefix(count))
        self.initialType = initialType
        self.footer = footer
    }

    /// Reads TZif data (the bytes of a zoneinfo file).
    /// - Throws: `FormatError` when the data is not TZif or is cut short.
    public init(tzif bytes: [UInt8]) throws(FormatError) {
        var reader = TZifReader(bytes: bytes)
        let first = try reader.header()
        guard first.version >= 2 else {
            let block = try reader.dataBlock(first, timeSize: 4)
            self.init(block: block, footer: nil)
            return
        }
        try reader.skipDataBlock(first, timeSize: 4)
        let second = try reader.header()
        let block = try reader.dataBlock(second, timeSize: 8)
        let footerText = reader.footer()
        var footer: PosixTimeZone?
        if let footerText, !footerText.isEmpty {
            do {
                footer = try PosixTimeZone(footerText)
            } catch {
                throw FormatError("footer '\(footerText)': \(error)")
            }
        }
        self.init(block: block, footer: footer)
    }

    /// Reads the zoneinfo file at `path` (at most 1 MiB).
    /// - Throws: `FormatError` when it cannot be read or is not TZif.
    public init(contentsOfFile path: String) throws(FormatError) {
        guard case .success(let bytes) = SmallFile.contents(of: path, limit: 1 << 20) else {
            throw FormatError("cannot read \(path)")
        }
        do {
            try self.init(tzif: bytes)
        } catch {
            throw FormatError("\(path): \(error)")
        }
    }

    private init(block: TZifReader.DataBlock, footer: PosixTimeZone?) {
        self.init(
            transitions: block.transitions, transitionTypes: block.transitionTypes.map { block.types[$0] },
            initialType: block.types.first ?? .init(utcOffset: 0, isDaylightSaving: false), footer: footer)
    }

    /// The local time type in effect at `time` (seconds since the epoch, UTC).
    public func localTimeType(at time: Int64) -> LocalTimeType {
        guard let first = transitions.first, let last = transitions.last else {
            // No table: the footer covers all time where there is one (RFC 8536 §3.3).
            return footer?.localTimeType(at: time) ?? initialType
        }
        if time < first { return initialType }
        if time >= last, let footer { return footer.localTimeType(at: time) }
        // The last transition at or before `time`.
        var low = 0
        var high = transitions.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if transitions[middle] <= time { low = middle } else { high = middle - 1 }
        }
        return transitionTypes[low]
    }

    /// Seconds east of UTC at `time` (seconds since the epoch, UTC).
    public func offset(at time: Int64) -> Int { localTimeType(at: time).utcOffset }

    /// The first time after `time` at which the offset from UTC changes (transitions that only
    /// rename the zone or flip the daylight-saving flag are passed over); `nil` when it never
    /// changes again (or not within 400 years).
    public func nextTransition(after time: Int64) -> Int64? {
        let current = offset(at: time)
        var cursor = time
        for _ in 0..<1000 {
            guard let next = nextTransitionOfAnyKind(after: cursor) else { return nil }
            if offset(at: next) != current { return next }
            cursor = next
        }
        return nil
    }

    private func nextTransitionOfAnyKind(after time: Int64) -> Int64? {
        if let last = transitions.last, time < last {
            // The first transition after `time`.
            var low = 0
            var high = transitions.count - 1
            while low < high {
                let middle = (low + high) / 2
                if transitions[middle] > time { high = middle } else { low = middle + 1 }
            }
            return transitions[low]
        }
        return footer?.nextTransition(after: time)
    }

    /// The local calendar date at `time`, as `YYYY-MM-DD`.
    public func localDate(at time: Int64) -> String {
        CivilDate(daysSinceEpoch: floorDivide(time + Int64(offset(at: time)), 86_400)).description
    }

    /// The first local midnight after `time`, in seconds since the epoch (UTC), as far as the
    /// current offset tells: a transition before it changes the answer, so wake at whichever of
    /// the two comes first and ask again.
    public func nextMidnight(after time: Int64) -> Int64 {
        let offset = Int64(offset(at: time))
        let day = floorDivide(time + offset, 86_400)
        return (day + 1) * 86_400 - offset
    }
}
