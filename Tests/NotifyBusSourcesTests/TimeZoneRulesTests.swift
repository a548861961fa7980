import NotifyBusSources
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// One line of `zdump -v`: a moment on either side of a transition, its offset and local date.
struct ZdumpMoment {
    var time: Int64
    var offset: Int
    var date: String
}

/// `zdump -v -c FROM,TO ZONE` (the zone database, or a POSIX TZ string), parsed.
func zdump(_ zone: String, from: Int, to: Int) -> [ZdumpMoment] {
    guard let pipe = popen("/usr/bin/zdump -v -c \(from),\(to) '\(zone)'", "r") else { return [] }
    defer { pclose(pipe) }
    var output: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = fread(&buffer, 1, buffer.count, pipe)
        if count <= 0 { break }
        output += buffer[0..<count]
    }
    return String(decoding: output, as: UTF8.self).split(separator: "\n").compactMap { line in
        // "Europe/Berlin  Sun Mar 26 01:00:00 2023 UT = Sun Mar 26 03:00:00 2023 CEST isdst=1 gmtoff=7200"
        let halves = line.split(separator: " UT = ", omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        let utc = halves[0].split(separator: " ").suffix(4).map(String.init)
        let local = halves[1].split(separator: " ").map(String.init)
        guard utc.count == 4, local.count >= 5, let offsetField = local.last, offsetField.hasPrefix("gmtoff="),
              let offset = Int(offsetField.dropFirst("gmtoff=".count)),
              let utcDay = dayNumber(month: utc[0], day: utc[1], year: utc[3])
        else { return nil }
        let clock = utc[2].split(separator: ":").compactMap { Int64($0) }
        guard clock.count == 3 else { return nil }
        let time = utcDay * 86_400 + clock[0] * 3600 + clock[1] * 60 + clock[2]
        let date = "\(local[4])-\(pad(monthNumber(local[1]) ?? 0))-\(pad(Int(local[2]) ?? 0))"
        return ZdumpMoment(time: time, offset: offset, date: date)
    }
}

private let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

private func monthNumber(_ name: String) -> Int? { months.firstIndex(of: name).map { $0 + 1 } }

private func pad(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

/// Days since 1970-01-01 (days_from_civil, written independently of the library's).
private func dayNumber(month: String, day: String, year: String) -> Int64? {
    guard let m = monthNumber(month), let d = Int64(day), let parsedYear = Int64(year) else { return nil }
    let y = m <= 2 ? parsedYear - 1 : parsedYear
    let era = (y >= 0 ? y : y - 399) / 400
    let yoe = y - era * 400
    let doy = (153 * Int64(m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    return era * 146_097 + doe - 719_468
}

/// Checks `rules` against zdump's moments: the offset and local date at each, and that
/// `nextTransition` finds every change of offset.
private func check(_ rules: TimeZoneRules, against moments: [ZdumpMoment], _ zone: String) {
    // zdump lists no moments for a zone without transitions (UTC).
    #expect(moments.count > 4 || rules.nextTransition(after: .min / 2) == nil, "zdump said too little about \(zone)")
    for moment in moments {
        #expect(rules.offset(at: moment.time) == moment.offset, "\(zone) at \(moment.time)")
        #expect(rules.localDate(at: moment.time) == moment.date, "\(zone) at \(moment.time)")
    }
    let changes = zip(moments, moments.dropFirst()).filter { $0.offset != $1.offset && $1.time == $0.time + 1 }.map { $1.time }
    for (change, next) in zip(changes, changes.dropFirst()) {
        #expect(rules.nextTransition(after: change) == next, "\(zone) after \(change)")
        #expect(rules.nextTransition(after: change - 1) == change, "\(zone) before \(change)")
    }
}

@Suite("TimeZoneRules against zdump")
struct TimeZoneRulesTests {
    static let zones = [
        "Pacific/Kiritimati", "America/Adak", "UTC", "Europe/Berlin", "Australia/Sydney", "Australia/Lord_Howe",
        "America/Nuuk", "Asia/Jerusalem",
    ]

    @Test(arguments: zones)
    func zoneDatabaseMatchesZdump(_ zone: String) throws {
        let rules = try TimeZoneRules(contentsOfFile: "/usr/share/zoneinfo/" + zone)
        // The table's years and well past them (the footer's rule).
        check(rules, against: zdump(zone, from: 1900, to: 2100), zone)
    }

    @Test(arguments: [
        "EST5EDT,M3.2.0,M11.1.0", "IST-2IDT,M3.4.4/26,M10.5.0", "<-03>3<-02>,M3.5.0/-2,M10.5.0/-1",
        "AEST-10AEDT,M10.1.0,M4.1.0/3", "<+1030>-10:30<+11>-11,M10.1.0,M4.1.0", "CET-1CEST,M3.5.0,M10.5.0/3",
        "XXX3YYY,J60/1,J300", "AAA-5BBB,59/3,300",
    ])
    func posixRulesMatchZdump(_ tz: String) throws {
        let footer = try PosixTimeZone(tz)
        let rules = TimeZoneRules(
            transitions: [], transitionTypes: [], initialType: .init(utcOffset: 0, isDaylightSaving: false), footer: footer)
        check(rules, against: zdump(tz, from: 2020, to: 2040), tz)
    }

    @Test func fixedOffsetsHaveNoTransitions() throws {
        let kiritimati = try TimeZoneRules(contentsOfFile: "/usr/share/zoneinfo/Pacific/Kiritimati")
        #expect(kiritimati.offset(at: 1_700_000_000) == 50_400)
        #expect(kiritimati.nextTransition(after: 1_700_000_000) == nil)
        // 2023-11-14T22:13:20Z is already the 15th there.
        #expect(kiritimati.localDate(at: 1_700_000_000) == "2023-11-15")
        #expect(kiritimati.nextMidnight(after: 1_700_000_000) == 1_700_042_400)
        let utc = try TimeZoneRules(contentsOfFile: "/usr/share/zoneinfo/UTC")
        #expect(utc.offset(at: 1_700_000_000) == 0)
        #expect(utc.nextTransition(after: 0) == nil)
        #expect(utc.nextMidnight(after: 1_700_000_000) == 1_700_006_400)
        #expect(TimeZoneRules.utc.localDate(at: -1) == "1969-12-31")
    }

    @Test func berlinAroundItsSpringTransition() throws {
        let berlin = try TimeZoneRules(contentsOfFile: "/usr/share/zoneinfo/Europe/Berlin")
        // 2024-03-31T01:00:00Z: 02:00 CET becomes 03:00 CEST.
        let change: Int64 = 1_711_846_800
        #expect(berlin.offset(at: change - 1) == 3600)
        #expect(berlin.offset(at: change) == 7200)
        #expect(berlin.nextTransition(after: change - 3600) == change)
        // Midnight after 2024-03-30T12:00Z (CET) is 2024-03-30T23:00Z.
        #expect(berlin.nextMidnight(after: 1_711_800_000) == 1_711_839_600)
        // 2050, past the table: from the footer.
        #expect(berlin.offset(at: 2_540_000_000) == 7200)  // 2050-06-27
    }

    @Test func malformedDataIsRefused() {
        #expect(throws: TimeZoneRules.FormatError.self) { try TimeZoneRules(tzif: Array("TZif2".utf8)) }
        #expect(throws: TimeZoneRules.FormatError.self) { try TimeZoneRules(tzif: [UInt8](repeating: 0, count: 100)) }
        #expect(throws: TimeZoneRules.FormatError.self) { try TimeZoneRules(contentsOfFile: "/nonexistent/zone") }
        #expect(throws: TimeZoneRules.FormatError.self) { try PosixTimeZone("C") }
        #expect(throws: TimeZoneRules.FormatError.self) { try PosixTimeZone("CET-1CEST,M13.5.0,M10.5.0") }
        #expect(throws: TimeZoneRules.FormatError.self) { try PosixTimeZone("CET-1CEST,M3.5.0") }
        // Every truncation of a real file is refused or read, never a crash.
        let bytes = (try? readAll("/usr/share/zoneinfo/Europe/Berlin")) ?? []
        #expect(bytes.count > 100)
        for length in stride(from: 0, to: bytes.count, by: 7) { _ = try? TimeZoneRules(tzif: Array(bytes.prefix(length))) }
    }

    @Test func linkTargetsNameTheirZone() {
        #expect(TimeSource.zoneName(fromLinkTarget: "../usr/share/zoneinfo/Europe/Berlin") == "Europe/Berlin")
        #expect(TimeSource.zoneName(fromLinkTarget: "/usr/share/zoneinfo/UTC") == "UTC")
        #expect(TimeSource.zoneName(fromLinkTarget: "/usr/share/zoneinfo/Etc/UTC") == "Etc/UTC")
        #expect(TimeSource.zoneName(fromLinkTarget: "/usr/share/zoneinfo/zoneinfo/America/Adak") == "America/Adak")
        #expect(TimeSource.zoneName(fromLinkTarget: "/usr/share/zoneinfo/") == nil)
        #expect(TimeSource.zoneName(fromLinkTarget: "/usr/share/zoneinfo/../x") == nil)
        #expect(TimeSource.zoneName(fromLinkTarget: "/etc/mytz") == nil)
    }
}

private func readAll(_ path: String) throws -> [UInt8] {
    guard let file = fopen(path, "rb") else { return [] }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = fread(&buffer, 1, buffer.count, file)
        if count <= 0 { break }
        bytes += buffer[0..<count]
    }
    return bytes
}
