import Foundation
import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

// The real notifywatch binary, watching a umockdev test bed of power supplies.
//
// Each test makes its own test bed (TestSupport's Testbed) and runs `notifywatch` under umockdev's
// preload with UMOCKDEV_DIR pointing at it, as a user or a script would: it reads standard output,
// sends signals, and checks the process state in /proc. Where a test must know that notifywatch
// has seen a change it cannot print (it is suspended), it waits for the change in the `--record`
// file, which is written line by line as the bus sees things.

/// Whether `line` has a `time` like `2026-11-21T10:00:00.250+01:00`: RFC 3339, to the millisecond,
/// with an offset.
private func hasRFC3339Time(_ line: JSONValue) -> Bool {
    line["time"]?.stringValue?.wholeMatch(of: #/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}([+-]\d\d:\d\d|Z)/#) != nil
}

@Suite("notifywatch watching live")
struct LiveWatchTests {
    @Test func printsTheSourceLineThenTheCurrentValues() throws {
        let testbed = try Testbed.laptop()
        let watcher = try Watcher(testbed: testbed)
        let (source, notes) = watcher.start(initial: 3)
        #expect(source?["source"] == "power")
        #expect(source?["status"] == "running")
        #expect(source?["reason"] == nil)
        #expect(source?["t"]?.doubleValue != nil)
        #expect(Set(notes) == laptopInitialNotes)
        // Each device's state before its level.
        let keys = notes.map(\.key)
        #expect((keys.firstIndex(of: "battery/BAT0/state") ?? .max) < (keys.firstIndex(of: "battery/BAT0/level") ?? .min))
        let initial = watcher.lines.dropFirst().compactMap { try? JSONValue(parsing: $0) }
        // All at the subscription's `t`.
        #expect(Set(initial.compactMap { $0["t"] }).count == 1)
        for line in initial {
            #expect(line["subscriber"] == "notifywatch")
            #expect(line["previous"] == nil)
            #expect((line["t"]?.doubleValue ?? -1) >= 0)
            #expect(hasRFC3339Time(line), "\(line)")
        }
        #expect(watcher.stop(with: SIGTERM) == 0)
    }

    @Test func printsLiveChangesAsTheyCome() throws {
        let testbed = try Testbed.laptop()
        let watcher = try Watcher(testbed: testbed)
        watcher.start(initial: 3)

        try testbed.update("BAT0", ["status": "Charging"])
        try testbed.update("BAT0", ["capacity": "81"])
        try testbed.update("AC", ["online": "1"])
        let lines = watcher.next(3)
        #expect(lines.compactMap(Note.init) == [
            Note("battery/BAT0/state", "charging", previous: "unplugged"),
            Note("battery/BAT0/level", 0.81, previous: 0.8),
            Note("power/AC/online", true, previous: false),
        ])
        let times = lines.compactMap { $0["t"]?.doubleValue }
        #expect(times.count == 3 && times == times.sorted())
        #expect(lines.allSatisfy(hasRFC3339Time))
        #expect(watcher.stop(with: SIGTERM) == 0)
    }

    @Test func liveTimesAreTheWallClockWithTheLocalOffset() throws {
        let testbed = try Testbed.laptop()
        // A POSIX zone string (no tzdata needed): five and a half hours east of UTC.
        let watcher = try Watcher(testbed: testbed, environment: ["TZ": "XYZ-5:30"])
        watcher.start(initial: 3)
        try testbed.update("AC", ["online": "1"])
        #expect(watcher.next()?["type"] == "notification")
        let parser = ISO8601DateFormatter()
        parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var origins: [Double] = []
        for line in watcher.lines.dropFirst().compactMap({ try? JSONValue(parsing: $0) }) {
            let time = try #require(line["time"]?.stringValue)
            #expect(time.hasSuffix("+05:30"), "\(time)")
            let date = try #require(parser.date(from: time), "\(time)")
            #expect(abs(date.timeIntervalSinceNow) < 60, "\(time)")
            origins.append(date.timeIntervalSince1970 - (line["t"]?.doubleValue ?? .nan))
        }
        // `time` is the start's wall-clock time plus `t` (to the millisecond) on every line.
        #expect(origins.count == 4)
        #expect((origins.max() ?? .infinity) - (origins.min() ?? 0) < 0.002, "\(origins)")
        #expect(watcher.stop(with: SIGTERM) == 0)
    }

    @Test func sourceLinesFollowTheSourcesStatus() throws {
        let testbed = try Testbed.laptop()
        let watcher = try Watcher(testbed: testbed)
        watcher.start(initial: 3)
        // Every supply unplugged: null for each key, and the source becomes unavailable.
        try testbed.remove("BAT0")
        try testbed.remove("AC")
        let gone = watcher.read { $0["type"] == "source" }
        #expect(gone.last?["status"] == "unavailable")
        #expect(gone.last?["reason"] == "no power_supply devices")
        #expect(gone.last?["source"] == "power")
        let nulls = (gone.dropLast() + watcher.next(3 - (gone.count - 1))).compactMap(Note.init)
        #expect(nulls.count == 3)
        #expect(Set(nulls) == [
            Note("battery/BAT0/state", .null, previous: "unplugged"),
            Note("battery/BAT0/level", .null, previous: 0.8),
            Note("power/AC/online", .null, previous: false),
        ])
        // Plugged in again: running, and the value.
        try testbed.plug("AC", ["type": "Mains", "online": "1"])
        let back = watcher.next(2)
        #expect(back.contains { $0["type"] == "source" && $0["status"] == "running" && $0["reason"] == nil })
        #expect(back.compactMap(Note.init) == [Note("power/AC/online", true, previous: .null)])
        #expect(watcher.standardError == "")
        #expect(watcher.stop(with: SIGTERM) == 0)
    }

    @Test func usr1HoldsEverythingAndUsr2FlushesOneLinePerKeyWithTheCounts() throws {
        let testbed = try Testbed.laptop()
        let watcher = try Watcher(testbed: testbed)
        watcher.start(initial: 3)

        let suspended = watcher.signal(SIGUSR1, expecting: "suspended")
        #expect(suspended?["subscriber"] == "notifywatch")
        try testbed.update("BAT0", ["status": "Charging"])
        try testbed.update("AC", ["online": "1"])
        try testbed.update("BAT0", ["status": "Discharging"])
        try testbed.update("AC", ["online": "0"])
        try testbed.update("BAT0", ["capacity": "79"])
        try testbed.update("BAT0", ["status": "Charging"])
        try testbed.update("AC", ["online": "1"])
        // The bus has seen all seven changes, and nothing was printed.
        watcher.waitUntilRecorded(3 + 7)
        #expect(watcher.linesArriving(within: .milliseconds(400)) == [])

        let resumed = watcher.signal(SIGUSR2, expecting: "resumed")
        #expect(resumed?["flushed"] == 3)
        #expect(resumed?["subscriber"] == "notifywatch")
        let flushed = watcher.next(3)
        // One per key, in the order of each key's latest event, each with how many it stands for.
        #expect(flushed.compactMap(Note.init) == [
            Note("battery/BAT0/level", 0.79, coalesced: 1, previous: 0.8),
            Note("battery/BAT0/state", "charging", coalesced: 3, previous: "unplugged"),
            Note("power/AC/online", true, coalesced: 3, previous: false),
        ])
        #expect(flushed.allSatisfy { $0["t"] == resumed?["t"] })

        // Live again: the next change comes at once, alone.
        try testbed.update("AC", ["online": "0"])
        #expect(watcher.next().flatMap(Note.init) == Note("power/AC/online", false, previous: true))
        #expect(watcher.stop(with: SIGTERM) == 0)
    }

    /// Started, nothing changing: no thread wakes in the seconds after the start, also not when
    /// the 5 s that notifywatch gives its sources for their first statuses have passed (the
    /// source was running long before).
    @Test func noThreadWakesOnceStartedAlsoNotWhenTheStartTimeoutPasses() async throws {
        let testbed = try Testbed.laptop()
        let origin = ContinuousClock.now
        let watcher = try Watcher(testbed: testbed)
        watcher.start(initial: 3)
        let wakes = await ThreadWakeups.record(pid: watcher.pid, origin: origin, settle: .seconds(1), window: .seconds(6))
        #expect(wakes.alive && wakes.total == 0, "\(wakes)")
        #expect(watcher.stop(with: SIGTERM) == 0)
    }

    @Test func ctrlZStopsTheProcessAndFgRereadsResumesAndFlushes() throws {
        let testbed = try Testbed.laptop()
        let watcher = try Watcher(testbed: testbed)
        watcher.start(initial: 3)

        // Ctrl-Z: `suspended`, then the process really stops.
        #expect(watcher.signal(SIGTSTP, expecting: "suspended") != nil)
        #expect(watcher.waitForState { $0 == "T" } == "T")

        // Changes while it is stopped: one announced by a uevent (queued on its socket), one
        // silent, as most capacity steps of real batteries are: only a re-read finds that one.
        try testbed.update("BAT0", ["capacity": "50"], announced: false)
        try testbed.update("AC", ["online": "1"])
        usleep(200_000)
        #expect(processState(watcher.pid) == "T")
        #expect(watcher.linesArriving(within: .milliseconds(300)) == [])

        // fg: running again, the sources re-read, and the changes come as one flush.
        watcher.signal(SIGCONT)
        #expect(watcher.waitForState { $0 != "T" }.map { ["S", "R"].contains($0) } == true)
        let resumed = watcher.next()
        #expect(resumed?["type"] == "resumed")
        #expect(resumed?["flushed"] == 2)
        #expect(Set(watcher.next(2).compactMap(Note.init)) == [
            Note("battery/BAT0/level", 0.5, coalesced: 1, previous: 0.8),
            Note("power/AC/online", true, coalesced: 1, previous: false),
        ])
        // Nothing more: the queued uevent repeats what the re-read found.
        #expect(watcher.linesArriving(within: .milliseconds(300)) == [])
        try testbed.update("BAT0", ["status": "Charging"])
        #expect(watcher.next().flatMap(Note.init) == Note("battery/BAT0/state", "charging", previous: "unplugged"))
        #expect(processState(watcher.pid).map { ["S", "R"].contains($0) } == true)
        #expect(watcher.stop(with: SIGTERM) == 0)
    }

    @Test func aSuspensionAskedForWithSIGUSR1OutlastsAStopAndContinue() throws {
        let testbed = try Testbed.laptop()
        let watcher = try Watcher(testbed: testbed)
        watcher.start(initial: 3)
        #expect(watcher.signal(SIGUSR1, expecting: "suspended") != nil)
        watcher.signal(SIGTSTP)
        #expect(watcher.waitForState { $0 == "T" } == "T")
        try testbed.update("AC", ["online": "1"])
        watcher.signal(SIGCONT)
        #expect(watcher.waitForState { $0 != "T" }.map { ["S", "R"].contains($0) } == true)
        // Still suspended: the re-read holds the change, and nothing is printed until SIGUSR2.
        #expect(watcher.linesArriving(within: .milliseconds(500)) == [])
        #expect(watcher.signal(SIGUSR2, expecting: "resumed")?["flushed"] == 1)
        #expect(watcher.next().flatMap(Note.init) == Note("power/AC/online", true, coalesced: 1, previous: false))
        #expect(watcher.stop(with: SIGTERM) == 0)
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func terminationExitsZeroLeavingACompleteRecording(signal: Int32) throws {
        let testbed = try Testbed.laptop()
        let watcher = try Watcher(testbed: testbed)
        watcher.start(initial: 3)
        try testbed.update("BAT0", ["capacity": "79"])
        #expect(watcher.next().flatMap(Note.init) == Note("battery/BAT0/level", 0.79, previous: 0.8))

        #expect(watcher.stop(with: signal) == 0)
        #expect(watcher.rest() == [])
        #expect(watcher.standardError == "")
        let text = try String(contentsOfFile: try #require(watcher.recording), encoding: .utf8)
        #expect(text.hasSuffix("}\n"))
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.allSatisfy { (try? JSONValue(parsing: String($0)))?["format"] != nil || (try? JSONValue(parsing: String($0)))?["t"] != nil })
        let header = try JSONValue(parsing: String(try #require(lines.first)))
        #expect(header["format"] == "notifybus-log")
        #expect(header["version"] == 1)
        #expect(watcher.records.contains { $0["type"] == "event" && $0["key"] == "battery/BAT0/level" && $0["value"] == 0.79 })
        #expect(watcher.records.last?["type"] == "unsubscribe")
        #expect(watcher.records.last?["subscriber"] == "notifywatch")
    }

    struct RecordingCase: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        /// How many lines the scenario prints, without the `source` line.
        var lines: Int
        var testDescription: String { arguments.isEmpty ? "defaults" : arguments.joined(separator: " ") }
    }

    /// Live changes, then changes held and flushed by USR1/USR2, then by Ctrl-Z and fg, then live
    /// again; whatever the options make of that, replaying the recording prints the same.
    @Test(arguments: [
        // 3 current values, 2 live, suspended, resumed + 2, suspended, resumed + 1, 1 live.
        RecordingCase(arguments: [], lines: 3 + 2 + 1 + (1 + 2) + 1 + (1 + 1) + 1),
        RecordingCase(arguments: ["--policy", "changed"], lines: 3 + 2 + 1 + (1 + 2) + 1 + (1 + 1) + 1),
        RecordingCase(arguments: ["--policy", "all"], lines: 3 + 2 + 1 + (1 + 4) + 1 + (1 + 1) + 1),
        RecordingCase(arguments: ["--policy", "drop"], lines: 3 + 2 + 1 + 1 + 1 + 1 + 1),
        RecordingCase(arguments: ["battery/**"], lines: 2 + 2 + 1 + (1 + 1) + 1 + (1 + 1)),
        RecordingCase(arguments: ["--no-initial"], lines: 2 + 1 + (1 + 2) + 1 + (1 + 1) + 1),
        // Two keys held with a limit of one: resumed, resync and the 3 current values.
        RecordingCase(arguments: ["--limit", "1"], lines: 3 + 2 + 1 + (1 + 1 + 3) + 1 + (1 + 1) + 1),
    ])
    func aRecordingReplaysToTheSameNotifications(_ test: RecordingCase) throws {
        let testbed = try Testbed.laptop()
        let watcher = try Watcher(test.arguments, testbed: testbed)
        #expect(watcher.next()?["type"] == "source")
        // Each step waits until the recording shows the bus has seen the one before.
        watcher.waitUntilRecorded(1, "subscribe")
        try testbed.update("BAT0", ["status": "Charging"])
        try testbed.update("BAT0", ["capacity": "81"])
        watcher.waitUntilRecorded(3 + 2)
        watcher.signal(SIGUSR1)
        watcher.waitUntilRecorded(1, "suspend")
        for online in ["1", "0", "1"] { try testbed.update("AC", ["online": online]) }
        try testbed.update("BAT0", ["status": "Discharging"])
        watcher.waitUntilRecorded(3 + 2 + 4)
        watcher.signal(SIGUSR2)
        watcher.waitUntilRecorded(1, "resume")
        watcher.signal(SIGTSTP)
        #expect(watcher.waitForState { $0 == "T" } == "T")
        try testbed.update("BAT0", ["capacity": "50"])
        watcher.signal(SIGCONT)
        watcher.waitUntilRecorded(2, "resume")
        try testbed.update("AC", ["online": "0"])
        watcher.waitUntilRecorded(3 + 2 + 4 + 1 + 1)
        #expect(watcher.stop(with: SIGTERM) == 0)
        _ = watcher.rest()

        // What was printed live, without the `source` lines and the live-only `time`.
        let live = watcher.lines.compactMap { line -> String? in
            guard case .object(var object)? = try? JSONValue(parsing: line), object["type"] != "source" else { return nil }
            #expect(object["type"] != "notification" || object["time"] != nil)
            object["time"] = nil
            return JSONValue.object(object).jsonText
        }
        #expect(live.count == test.lines, "\(live)")
        let replay = try run(["replay", try #require(watcher.recording), "--json"])
        #expect(replay.status == 0)
        #expect(replay.stderr == "")
        #expect(replay.lines == live)
    }

    @Test func humanOutputIsPlainColumnsOffATerminalWithCountsAndPreviousValuesOnAFlush() throws {
        let testbed = try Testbed.laptop()
        let watcher = try Watcher(testbed: testbed, json: false)
        let start = (0..<4).compactMap { _ in watcher.nextLine() }
        let clock = #/^\d\d:\d\d:\d\d\.\d{3}  /#
        #expect(start.first?.contains("source power: running") == true)
        #expect(start.allSatisfy { $0.prefixMatch(of: clock) != nil }, "\(start)")
        let initial = start.dropFirst()
        #expect(initial.allSatisfy { $0.hasSuffix("(current)") && !$0.contains("×") && !$0.contains("was") })
        #expect(initial.contains { $0.contains("battery/BAT0/state") && $0.contains("\"unplugged\"") })
        #expect(initial.contains { $0.contains("battery/BAT0/level") && $0.contains("0.8") })
        #expect(initial.contains { $0.contains("power/AC/online") && $0.contains("false") })

        watcher.signal(SIGUSR1)
        #expect(watcher.nextLine()?.contains("suspended") == true)
        for status in ["Charging", "Discharging", "Charging"] { try testbed.update("BAT0", ["status": status]) }
        try testbed.update("BAT0", ["capacity": "79"])
        watcher.waitUntilRecorded(3 + 4)
        #expect(watcher.linesArriving(within: .milliseconds(300)) == [])
        watcher.signal(SIGUSR2)
        #expect(watcher.nextLine()?.contains("resumed — 2 flushed") == true)
        let state = try #require(watcher.nextLine())
        #expect(state.contains("battery/BAT0/state"))
        #expect(state.hasSuffix(#""charging"  ×3  was "unplugged""#), "\(state)")
        let level = try #require(watcher.nextLine())
        #expect(level.contains("battery/BAT0/level"))
        #expect(level.hasSuffix("0.79  ×1  was 0.8"), "\(level)")

        try testbed.update("AC", ["online": "1"])
        let live = try #require(watcher.nextLine())
        #expect(live.contains("power/AC/online"))
        #expect(live.hasSuffix("true"))
        #expect(!live.contains("×") && !live.contains("was"))
        // Aligned columns: time, then the key, then the value, at the same place on every line.
        for line in Array(initial) + [state, level, live] {
            let characters = Array(line)
            #expect(characters.count > 41 && String(characters[12...13]) == "  " && characters[14] != " ", "\(line)")
            #expect(characters.count > 41 && String(characters[38...39]) == "  " && characters[40] != " ", "\(line)")
        }
        #expect(watcher.lines.allSatisfy { !$0.contains("\u{1B}") })
        #expect(watcher.stop(with: SIGTERM) == 0)
    }

    @Test func colorAlwaysPaintsTheHumanOutput() throws {
        let testbed = try Testbed.laptop()
        let watcher = try Watcher(["--color", "always"], testbed: testbed, json: false, record: false)
        let lines = (0..<4).compactMap { _ in watcher.nextLine() }
        #expect(lines.count == 4)
        #expect(lines.allSatisfy { $0.contains("\u{1B}[") })
        #expect(watcher.stop(with: SIGTERM) == 0)
    }

    struct PatternCase: Sendable, CustomTestStringConvertible {
        var patterns: [String]
        /// The keys of the laptop's that match.
        var keys: Set<String>
        var testDescription: String { patterns.joined(separator: " ") }
    }

    @Test(arguments: [
        PatternCase(patterns: ["battery/**"], keys: ["battery/BAT0/state", "battery/BAT0/level"]),
        PatternCase(patterns: ["power/*/online", "battery/*/state"], keys: ["power/AC/online", "battery/BAT0/state"]),
    ])
    func patternsFilterTheKeys(_ test: PatternCase) throws {
        let testbed = try Testbed.laptop()
        let watcher = try Watcher(test.patterns, testbed: testbed)
        let (_, notes) = watcher.start(initial: test.keys.count)
        #expect(Set(notes.map(\.key)) == test.keys)

        // A change to every key; the state comes last, and both cases watch it.
        try testbed.update("AC", ["online": "1"])
        try testbed.update("BAT0", ["capacity": "79"])
        try testbed.update("BAT0", ["status": "Charging"])
        let changes = watcher.read { $0["key"] == "battery/BAT0/state" }.compactMap(Note.init)
        let all = [
            Note("power/AC/online", true, previous: false),
            Note("battery/BAT0/level", 0.79, previous: 0.8),
            Note("battery/BAT0/state", "charging", previous: "unplugged"),
        ]
        #expect(changes == all.filter { test.keys.contains($0.key) })
        #expect(watcher.stop(with: SIGTERM) == 0)
    }

    struct PolicyCase: Sendable, CustomTestStringConvertible {
        var policy: String
        var flushed: [Note]
        var testDescription: String { policy }
    }

    /// While suspended: the state goes to charging and back (it ends where it was), the level
    /// changes once.
    @Test(arguments: [
        PolicyCase(policy: "latest", flushed: [
            Note("battery/BAT0/state", "unplugged", coalesced: 2, previous: "unplugged"),
            Note("battery/BAT0/level", 0.79, coalesced: 1, previous: 0.8),
        ]),
        PolicyCase(policy: "changed", flushed: [
            Note("battery/BAT0/level", 0.79, coalesced: 1, previous: 0.8),
        ]),
        PolicyCase(policy: "all", flushed: [
            Note("battery/BAT0/state", "charging", coalesced: 1, previous: "unplugged"),
            Note("battery/BAT0/state", "unplugged", coalesced: 1, previous: "charging"),
            Note("battery/BAT0/level", 0.79, coalesced: 1, previous: 0.8),
        ]),
        PolicyCase(policy: "drop", flushed: []),
    ])
    func policyDecidesWhatAResumeFlushes(_ test: PolicyCase) throws {
        let testbed = try Testbed.laptop()
        let watcher = try Watcher(["--policy", test.policy], testbed: testbed)
        #expect(Set(watcher.start(initial: 3).notes) == laptopInitialNotes)
        _ = watcher.signal(SIGUSR1, expecting: "suspended")
        try testbed.update("BAT0", ["status": "Charging"])
        try testbed.update("BAT0", ["status": "Discharging"])
        try testbed.update("BAT0", ["capacity": "79"])
        watcher.waitUntilRecorded(3 + 3)
        #expect(watcher.linesArriving(within: .milliseconds(300)) == [])

        let resumed = watcher.signal(SIGUSR2, expecting: "resumed")
        #expect(resumed?["flushed"] == .integer(Int64(test.flushed.count)))
        // A live change marks the end of the flush.
        try testbed.update("AC", ["online": "1"])
        let lines = watcher.read { $0["key"] == "power/AC/online" }
        #expect(lines.dropLast().compactMap(Note.init) == test.flushed)
        #expect(lines.last.flatMap(Note.init) == Note("power/AC/online", true, previous: false))
        #expect(watcher.stop(with: SIGTERM) == 0)
    }

    @Test func noInitialStartsWithTheSourceLineAndThenOnlyChanges() throws {
        let testbed = try Testbed.laptop()
        let watcher = try Watcher(["--no-initial"], testbed: testbed)
        #expect(watcher.next()?["type"] == "source")
        // Once subscribed (the recording says when), a change is the first notification.
        watcher.waitUntilRecorded(1, "subscribe")
        #expect(watcher.records.first { $0["type"] == "subscribe" }?["initial"] == nil)
        try testbed.update("BAT0", ["capacity": "79"])
        let first = watcher.next()
        #expect(first.flatMap(Note.init) == Note("battery/BAT0/level", 0.79, coalesced: 1))
        #expect(first?["previous"] == nil)
        #expect(watcher.stop(with: SIGTERM) == 0)
    }

    @Test func everyLineIsAJSONObjectWithATypeThroughALimitResync() throws {
        let testbed = try Testbed.laptop()
        // One key at most is held: a second key while suspended means a resync.
        let watcher = try Watcher(["--limit", "1"], testbed: testbed)
        watcher.start(initial: 3)
        _ = watcher.signal(SIGUSR1, expecting: "suspended")
        try testbed.update("BAT0", ["status": "Charging"])
        try testbed.update("AC", ["online": "1"])
        watcher.waitUntilRecorded(3 + 2)
        // `flushed` counts what follows: every current value.
        #expect(watcher.signal(SIGUSR2, expecting: "resumed")?["flushed"] == 3)
        let resync = watcher.next()
        #expect(resync?["type"] == "resync")
        #expect(resync?["reason"] == "limit")
        #expect(resync?["subscriber"] == "notifywatch")
        // Then every current value, coalesced 0, in the order of each key's latest event.
        #expect(watcher.next(3).compactMap(Note.init) == [
            Note("battery/BAT0/level", 0.8, coalesced: 0, previous: 0.8),
            Note("battery/BAT0/state", "charging", coalesced: 0, previous: "unplugged"),
            Note("power/AC/online", true, coalesced: 0, previous: false),
        ])
        _ = watcher.signal(SIGTSTP, expecting: "suspended")
        watcher.waitForState { $0 == "T" }
        watcher.signal(SIGCONT)
        #expect(watcher.next()?["flushed"] == 0)
        #expect(watcher.stop(with: SIGTERM) == 0)
        _ = watcher.rest()

        // Independently of the reading above: every line, by Foundation's JSON parser.
        #expect(watcher.lines.count == 1 + 3 + 1 + 1 + 1 + 3 + 1 + 1)
        for line in watcher.lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            let type = try #require(object["type"] as? String)
            #expect(lineTypes.contains(type))
            #expect(object["t"] is NSNumber, "\(line)")
            if type != "source" { #expect(object["subscriber"] as? String == "notifywatch") }
        }
        #expect(Set(watcher.lines.compactMap { (try? JSONValue(parsing: $0))?["type"]?.stringValue }) == lineTypes)
    }
}
