import SystemSupport
import Testing

/// 2026-11-21T09:00:00Z.
private let nineOClock: Int64 = 1_795_251_600 * 1_000_000_000

@Suite struct WallTimeTests {
    @Test(arguments: [
        ("2026-11-21T09:00:00Z", nineOClock),
        ("2026-11-21T09:00:00z", nineOClock),
        ("2026-11-21T10:00:00.250+01:00", nineOClock + 250_000_000),
        ("2026-11-21T08:30:00.5-00:30", nineOClock + 500_000_000),
        ("2026-11-21T09:00:00.123456789Z", nineOClock + 123_456_789),
        ("2026-11-21T09:00:00.1234567891Z", nineOClock + 123_456_789),
        ("2024-02-29T23:59:59Z", 1_709_251_199 * 1_000_000_000),
        ("1969-12-31T23:59:59.999Z", -1_000_000),
    ] as [(String, Int64)])
    func readsRFC3339(text: String, nanoseconds: Int64) {
        #expect(WallTime(rfc3339: text)?.nanoseconds == nanoseconds)
    }

    @Test(arguments: [
        "", "2026-11-21", "2026-11-21T09:00:00", "2026-11-21 09:00:00Z", "2026-11-21T09:00Z",
        "2026-11-21T09:00:00.Z", "2026-11-21T09:00:00Zjunk", "2026-11-21T09:00:00+0100",
        "2026-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-31T00:00:00Z", "2026-11-21T24:00:00Z",
        "2026-11-21T09:60:00Z", "2026-11-21T09:00:60Z", "2026-11-21T09:00:00+24:00",
        // Past what 64 bits of nanoseconds hold.
        "3000-01-01T00:00:00Z", "1600-01-01T00:00:00Z",
    ])
    func refusesWhatIsNotRFC3339(text: String) {
        #expect(WallTime(rfc3339: text) == nil)
    }

    @Test func writesUTCToTheMillisecondRoundedDown() {
        #expect(WallTime(nanoseconds: nineOClock + 250_999_999).rfc3339 == "2026-11-21T09:00:00.250Z")
        #expect(WallTime(nanoseconds: -1).rfc3339 == "1969-12-31T23:59:59.999Z")
        #expect(WallTime(nanoseconds: 0).rfc3339 == "1970-01-01T00:00:00.000Z")
        let time = WallTime(nanoseconds: nineOClock + 7_000_000)
        #expect(WallTime(rfc3339: time.rfc3339) == time)
    }

    @Test func movesAndMeasures() {
        let start = WallTime(nanoseconds: nineOClock)
        #expect(start.advanced(bySeconds: 0.1).nanoseconds == nineOClock + 100_000_000)
        #expect(start.advanced(bySeconds: -1.25).nanoseconds == nineOClock - 1_250_000_000)
        #expect(start.advanced(by: .milliseconds(1500)).since(start) == .milliseconds(1500))
        #expect(WallTime(nanoseconds: -1).seconds == -1)
        #expect(start < start.advanced(by: .nanoseconds(1)))
        #expect(LocalTime(start.advanced(bySeconds: 61.5), zone: .utc).clock == "09:01:01.500")
    }

    @Test func countsCivilDates() {
        #expect(CivilDate(daysSinceEpoch: 0).description == "1970-01-01")
        #expect(CivilDate(daysSinceEpoch: -1).description == "1969-12-31")
        #expect(CivilDate.daysSinceEpoch(year: 2026, month: 11, day: 21) * 86_400 * 1_000_000_000 == nineOClock - 9 * 3_600_000_000_000)
        let ides = CivilDate.daysSinceEpoch(year: -44, month: 3, day: 15)
        #expect(CivilDate(daysSinceEpoch: ides).description == "-0044-03-15")
        #expect(CivilDate.daysIn(month: 2, year: 2000) == 29)
        #expect(CivilDate.daysIn(month: 2, year: 1900) == 28)
    }
}
