import Foundation
import Testing

/// The real `notifywatch` binary, run as a user would.
@Suite struct NotifyWatchReplayTests {
    @Test(arguments: Paths.exampleLogNames)
    func replayPrintsTheGoldenOutput(name: String) throws {
        let log = Paths.exampleLogs.appendingPathComponent("\(name).jsonl").path
        let json = try run(Paths.notifywatch, ["replay", log, "--json"])
        #expect(json.status == 0)
        #expect(json.stderr == "")
        #expect(json.stdout == (try String(contentsOf: Paths.exampleLogs.appendingPathComponent("expected/\(name).json-lines"), encoding: .utf8)))
        let human = try run(Paths.notifywatch, ["replay", log, "--color", "never"], environment: ["TZ": "UTC"])
        #expect(human.status == 0)
        #expect(human.stdout == (try String(contentsOf: Paths.exampleLogs.appendingPathComponent("expected/\(name).txt"), encoding: .utf8)))
    }

    @Test func everyJSONLineIsAnObjectWithAType() throws {
        let result = try run(Paths.notifywatch, ["replay", Paths.exampleLogs.appendingPathComponent("policies.jsonl").path, "--json"])
        for line in result.stdout.split(separator: "\n") {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(["notification", "suspended", "resumed", "resync"].contains(object?["type"] as? String))
        }
    }

    @Test(arguments: [
        ("unknown-subscriber.jsonl", ":4: no subscriber named \"ghost\""),
        ("truncated.jsonl", ":3: not valid JSON"),
    ])
    func aBadLogExitsNonZeroNamingFileAndLineAfterWhatCameBefore(file: String, message: String) throws {
        let path = Paths.badLogs.appendingPathComponent(file).path
        let result = try run(Paths.notifywatch, ["replay", path, "--json"])
        #expect(result.status != 0)
        #expect(result.stderr.contains(path + message))
        #expect(result.stdout.split(separator: "\n").count == 1)
    }

    @Test func skipBadLinesGoesOnAndSaysWhatItSkipped() throws {
        let file = Paths.badLogs.appendingPathComponent("unknown-subscriber.jsonl").path
        let result = try run(Paths.notifywatch, ["replay", file, "--json", "--skip-bad-lines"])
        #expect(result.status == 0)
        #expect(result.stderr.contains("skipped \(file):4:"))
        #expect(result.stdout.split(separator: "\n").count == 2)
    }

    @Test func replayReadsStandardInput() throws {
        let text = try String(contentsOf: Paths.exampleLogs.appendingPathComponent("default-subscriber.jsonl"), encoding: .utf8)
        let result = try run(Paths.notifywatch, ["replay", "-", "--json"], stdin: text)
        #expect(result.status == 0)
        #expect(result.stdout == (try String(contentsOf: Paths.exampleLogs.appendingPathComponent("expected/default-subscriber.json-lines"), encoding: .utf8)))
    }

    @Test func pacedReplayTakesTheLogsTime() throws {
        let text = """
            {"format": "notifybus-log", "version": 1}
            {"t": 0, "type": "event", "key": "a", "value": 1}
            {"t": 0.4, "type": "event", "key": "a", "value": 2}
            """
        let start = Date()
        let result = try run(Paths.notifywatch, ["replay", "-", "--json", "--speed", "2"], stdin: text)
        #expect(result.status == 0)
        #expect(Date().timeIntervalSince(start) >= 0.2)
        #expect(result.stdout.split(separator: "\n").count == 2)
    }

    @Test(arguments: [
        ["replay"], ["replay", "x.jsonl", "--speed", "-1"], ["replay", "x.jsonl", "--color", "purple"], ["--frobnicate"],
    ])
    func malformedArgumentsExitNonZeroWithAMessage(arguments: [String]) throws {
        let result = try run(Paths.notifywatch, arguments)
        #expect(result.status != 0)
        #expect(!result.stderr.isEmpty)
    }

    @Test func aMissingFileIsAClearError() throws {
        let result = try run(Paths.notifywatch, ["replay", "/nonexistent/log.jsonl"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("cannot read /nonexistent/log.jsonl"))
    }
}
