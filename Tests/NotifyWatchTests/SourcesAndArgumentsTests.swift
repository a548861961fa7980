import Foundation
import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

// The real notifywatch binary where nothing can run, listing its sources, and refusing bad
// arguments.

/// The key patterns of the power source, as `sources` lists them.
private let powerKeys: [JSONValue] = ["battery/*/state", "battery/*/level", "power/*/online"]

/// Watching everything, or only the power source, on a machine without power supplies.
private let nothingAvailable: [[String]] = [[], ["--source", "power"]]

@Suite("notifywatch sources, availability and arguments")
struct SourcesAndArgumentsTests {
    @Test(arguments: nothingAvailable)
    func withNothingAvailableItSaysSoAndKeepsWatching(arguments: [String]) throws {
        let testbed = try Testbed()
        let watcher = try Watcher(arguments, testbed: testbed)
        let source = watcher.next()
        #expect(source?["type"] == "source")
        #expect(source?["source"] == "power")
        #expect(source?["status"] == "unavailable")
        #expect(source?["reason"] == "no power_supply devices")
        watcher.waitForStandardError(containing: "no source is available here (power: no power_supply devices)")
        #expect(watcher.standardError.contains("watching anyway"))

        // Still watching: no exit, and a supply plugged in later shows up.
        watcher.waitUntilRecorded(1, "subscribe")
        #expect(watcher.process.waitForExit(timeout: .milliseconds(300)) == nil)
        try testbed.plug("AC", ["type": "Mains", "online": "1"])
        let lines = watcher.next(2)
        #expect(lines.contains { $0["type"] == "source" && $0["status"] == "running" })
        #expect(lines.compactMap(Note.init) == [Note("power/AC/online", true)])
        #expect(watcher.stop(with: SIGTERM) == 0)
    }

    @Test(arguments: nothingAvailable)
    func exitIfUnavailableExits69(arguments: [String]) throws {
        let testbed = try Testbed()
        let watcher = try Watcher(arguments + ["--exit-if-unavailable"], testbed: testbed)
        #expect(watcher.waitForExitStatus() == 69)
        let lines = watcher.rest()
        #expect(lines.count == 1)
        #expect(lines.first.flatMap { try? JSONValue(parsing: $0) }?["status"] == "unavailable")
        #expect(watcher.standardError.contains("no source is available here"))
        #expect(!watcher.standardError.contains("watching anyway"))
    }

    @Test func exitIfUnavailableKeepsWatchingWhenASourceRuns() throws {
        let testbed = try Testbed.laptop()
        let watcher = try Watcher(["--exit-if-unavailable"], testbed: testbed)
        #expect(watcher.start(initial: 3).source?["status"] == "running")
        #expect(watcher.process.waitForExit(timeout: .milliseconds(300)) == nil)
        #expect(watcher.standardError == "")
        #expect(watcher.stop(with: SIGTERM) == 0)
    }

    @Test func noSourceChosenIsSaidOnStandardError() throws {
        let testbed = try Testbed.laptop()
        let everySource = ["power", "sensors", "locale", "settings", "time", "display", "power-profile", "network", "login", "memory", "thermal"].flatMap { ["--no-source", $0] }
        let result = try run(everySource + ["--exit-if-unavailable"], testbed: testbed)
        #expect(result.status == 69)
        #expect(result.lines == [])
        #expect(result.stderr.contains("no source was chosen"))
    }

    /// Where systemd-localed is not installed, the locale comes from the files: the normal way
    /// there, so standard error stays empty, unless `--log-level debug` asks what happened.
    @Test func aSystemBusWithoutLocaledIsNothingToWarnAbout() throws {
        let bus = try PrivateBus()
        let arguments = ["--source", "locale", "--system-bus", bus.address, "--no-initial"]
        let quiet = try Watcher(arguments, testbed: nil, record: false)
        #expect(quiet.next()?["type"] == "source")
        #expect(quiet.stop(with: SIGTERM) == 0)
        #expect(quiet.standardError == "")
        let told = try Watcher(arguments + ["--log-level", "debug"], testbed: nil, record: false)
        #expect(told.next()?["type"] == "source")
        #expect(told.waitForStandardError(containing: "locale: reading Locale from org.freedesktop.locale1 failed"))
        #expect(told.stop(with: SIGTERM) == 0)
    }

    @Test func sourcesListsEachSourceWithItsStatusAndKeys() throws {
        let testbed = try Testbed.laptop()
        let human = try run(["sources"], testbed: testbed)
        #expect(human.status == 0)
        #expect(human.stderr == "")
        #expect(human.lines.map { $0.prefix { $0 != " " } } == ["power", "sensors", "locale", "settings", "time", "display", "power-profile", "network", "login", "memory", "thermal"])
        let line = try #require(human.lines.first)
        #expect(line.hasPrefix("power "))
        #expect(line.contains(" running "))
        #expect(line.hasSuffix("battery/*/state battery/*/level power/*/online"))

        let json = try run(["sources", "--json"], testbed: testbed)
        #expect(json.status == 0)
        #expect(json.lines.count == 11)
        #expect(json.lines.allSatisfy(isContractLine))
        let object = try JSONValue(parsing: try #require(json.lines.first))
        #expect(object == ["type": "source", "source": "power", "status": "running", "keys": .array(powerKeys)])
    }

    @Test func sourcesSaysWhyASourceIsUnavailable() throws {
        let testbed = try Testbed()
        let json = try run(["sources", "--json"], testbed: testbed)
        #expect(json.status == 0)
        let object = try JSONValue(parsing: try #require(json.lines.first))
        #expect(object == [
            "type": "source", "source": "power", "status": "unavailable", "reason": "no power_supply devices",
            "keys": .array(powerKeys),
        ])
        let human = try run(["sources"], testbed: testbed)
        #expect(human.status == 0)
        #expect(human.lines.first?.contains("unavailable (no power_supply devices)") == true)
    }

    struct BadArguments: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        /// What standard error must say.
        var message: String
        var status: Int32 = 64  // EX_USAGE
        var testDescription: String { arguments.joined(separator: " ") }
    }

    @Test(arguments: [
        BadArguments(arguments: ["--policy", "newest"], message: "'newest' is invalid for '--policy <policy>'"),
        BadArguments(arguments: ["--source", "nope"], message: #"unknown source "nope" (the sources are: power, sensors, locale, settings, time, display, power-profile, network, login, memory, thermal)"#),
        BadArguments(arguments: ["--no-source", "nope"], message: #"unknown source "nope""#),
        BadArguments(arguments: ["--limit", "-1"], message: "--limit"),
        BadArguments(arguments: ["--limit=-1"], message: "--limit must be 0 or more"),
        BadArguments(arguments: ["--limit", "many"], message: "many"),
        // The daemon holds at most 65,536 entries for a subscription: nothing else is sent.
        BadArguments(arguments: ["--daemon", "--limit", "65537"], message: "--limit with --daemon must be 1 to 65536"),
        BadArguments(arguments: ["--daemon", "--limit", "0"], message: "--limit with --daemon must be 1 to 65536"),
        BadArguments(arguments: ["--color", "purple"], message: "purple"),
        BadArguments(arguments: ["--frobnicate"], message: "--frobnicate"),
        BadArguments(arguments: ["sources", "--policy", "all"], message: "--policy"),
        // Standard output carries what is watched: a log there would be mixed into it.
        BadArguments(arguments: ["--record", "-"], message: "--record"),
        BadArguments(arguments: ["--record", "/nonexistent/dir/log.jsonl"],
                     message: "cannot open /nonexistent/dir/log.jsonl", status: 73),
    ])
    func malformedArgumentsExitNonZeroWithAMessage(_ test: BadArguments) throws {
        let result = try run(test.arguments + ["--json"])
        #expect(result.status == test.status)
        #expect(result.lines == [])
        #expect(result.stderr.contains(test.message), "\(result.stderr)")
    }

    /// No system bus, and SIGCONT along with SIGTERM (as `timeout` and service managers send
    /// them): whatever the locale files give is printed at start, and nothing at shutdown.
    @Test func aLocaleSourceWithoutABusPrintsNothingAtShutdown() throws {
        let directory = makeScratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let watcher = try Watcher(
            ["--source", "locale", "--system-bus", "unix:path=\(directory)/no-bus-here"], testbed: nil, record: false)
        let source = watcher.next()
        #expect(source?["source"] == "locale")
        #expect(source?["status"] == "unavailable")
        // The files' locale, if this machine has a locale file, is among the current values.
        let initial = watcher.linesArriving(within: .milliseconds(500))
        #expect(initial.count <= 1)
        watcher.signal(SIGCONT)
        #expect(watcher.stop(with: SIGTERM) == 0)
        let atShutdown = watcher.rest().compactMap { try? JSONValue(parsing: $0) }
        #expect(!atShutdown.contains { $0["type"] == "notification" }, "\(atShutdown)")
    }

    @Test func logLevelChoosesWhatTheSourcesLog() throws {
        let directory = makeScratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let watcher = try Watcher(
            ["--source", "locale", "--system-bus", "unix:path=\(directory)/no-bus-here", "--log-level", "debug"],
            testbed: nil, record: false)
        #expect(watcher.next()?["source"] == "locale")
        #expect(watcher.waitForStandardError(containing: "notifywatch: locale: status: unavailable"))
        #expect(watcher.stop(with: SIGTERM) == 0)
    }
}
