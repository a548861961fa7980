import Foundation
import NotifyBus
import NotifyBusLog
import Testing

@Suite struct EventLogTests {
    static let badLogs: [(file: String, line: Int?, message: String)] = [
        ("truncated.jsonl", 3, "not valid JSON: unexpected end of text in a string"),
        ("key-not-string.jsonl", 2, "\"key\" must be a string, found a number (7)"),
        ("t-not-number.jsonl", 2, "\"t\" must be a non-negative number of seconds (at most 9223372036), found \"0\""),
        ("unknown-version.jsonl", 1, "unsupported log version 2"),
        ("t-too-large.jsonl", 2, "\"t\" must be a non-negative number of seconds (at most 9223372036), found 1000000000000.0"),
        ("decreasing-t.jsonl", 3, "\"t\" goes back in time: 4 is less than the previous record's 5"),
        ("bad-policy.jsonl", 2, "\"policy\" must be one of"),
        ("no-header.jsonl", 1, "not a NotifyBus log"),
        ("unknown-type.jsonl", 2, "unknown record type \"teleport\""),
        ("not-an-object.jsonl", 2, "expected a JSON object, found an array"),
        ("missing-value.jsonl", 2, "event has no \"value\""),
        ("bad-limit.jsonl", 2, "\"limit\" must be a non-negative whole number"),
        ("invalid-utf8.jsonl", 2, "not valid UTF-8"),
    ]

    @Test(arguments: badLogs.map(\.file))
    func badLinesGiveErrorsWithFileAndLine(file: String) throws {
        let expected = Self.badLogs.first { $0.file == file }!
        let bytes = try [UInt8](Data(contentsOf: Paths.badLogs.appendingPathComponent(file)))
        let (_, error) = EventLog.readPrefix(of: bytes, file: file)
        let e = try #require(error)
        #expect(e.file == file)
        #expect(e.line == expected.line)
        #expect(e.message.contains(expected.message), "\(e)")
        #expect(e.description.hasPrefix("\(file):\(expected.line!): "))
    }

    @Test(arguments: ["unknown-subscriber.jsonl", "unsubscribed.jsonl"])
    func recordsNamingAMissingSubscriberStopTheReplayAtThatLine(file: String) throws {
        let text = try String(contentsOf: Paths.badLogs.appendingPathComponent(file), encoding: .utf8)
        let replayer = LogReplayer(log: try EventLog(parsing: text, file: file))
        var lines: [ReplayLine] = []
        #expect {
            try replayer.run { lines += $0 }
        } throws: { error in
            guard let e = error as? EventLogError else { return false }
            return e.file == file && e.line == 4 && e.message.contains("no subscriber named")
        }
        // What came before the bad line was replayed; nothing after it.
        #expect(lines.allSatisfy { $0.t.seconds < 2 })
    }

    @Test func skippingBadLinesKeepsTheGoodOnes() throws {
        let text = """
            {"format": "notifybus-log", "version": 1}
            {"t": 0, "type": "event", "key": "a", "value": 1}
            {"t": 1, "type": "event", "key": "a"
            {"t": 2, "type": "event", "key": "a", "value": 2}
            """
        let log = try EventLog(parsing: text, file: "x.jsonl", skippingBadLines: true)
        #expect(log.entries.count == 2)
        #expect(log.skipped.map(\.line) == [3])
        #expect(throws: EventLogError.self) { try EventLog(parsing: text, file: "x.jsonl") }
    }

    @Test func commentsBlankLinesAndMetadataAreAccepted() throws {
        let text = """

            # a comment
              # an indented comment
            {"format": "notifybus-log", "version": 1, "recorded": "2026-11-21T09:00:00Z", "host": "h"}

            {"t": 0, "type": "event", "key": "a", "value": null, "source": "test"}
            """
        let log = try EventLog(parsing: text)
        #expect(log.header["host"] == "h")
        #expect(log.entries == [LogEntry(t: LogTime(seconds: 0), record: .event(key: "a", value: .null, source: "test"), line: 6)])
    }

    @Test func writerOutputReadsBackTheSame() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("notifybus-\(UUID()).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let entries: [LogEntry] = [
            LogEntry(t: LogTime(seconds: 0), record: .event(key: "locale", value: ["LANG": "de_DE.UTF-8"], source: "locale")),
            LogEntry(t: LogTime(seconds: 0.25), record: .subscribe(SubscribeRecord(subscriber: "app", match: ["battery/**"], policy: .changed, limit: 5, initial: .current))),
            LogEntry(t: LogTime(seconds: 1), record: .suspend(subscriber: "app")),
            LogEntry(t: LogTime(seconds: 1.5), record: .event(key: "battery/BAT0/level", value: 0.5, source: nil)),
            LogEntry(t: LogTime(seconds: 2), record: .resume(subscriber: "app")),
            LogEntry(t: LogTime(seconds: 3), record: .unsubscribe(subscriber: "app")),
        ]
        let writer = try EventLogWriter(path: path, metadata: ["host": "test"])
        for e in entries { try writer.write(e) }
        writer.close()
        let log = try EventLog(parsing: String(contentsOfFile: path, encoding: .utf8), file: path)
        #expect(log.entries.map(\.record) == entries.map(\.record))
        #expect(log.entries.map(\.t) == entries.map(\.t))
        #expect(log.header["host"] == "test")
        #expect(throws: EventLogWriteError.self) { try writer.write(entries[0]) }
    }

    @Test func aSubscribeRecordAnywhereMeansNoImplicitDefault() throws {
        let text = """
            {"format": "notifybus-log", "version": 1}
            {"t": 0, "type": "event", "key": "a", "value": 1}
            {"t": 1, "type": "subscribe", "subscriber": "late"}
            {"t": 2, "type": "suspend"}
            """
        let replayer = LogReplayer(log: try EventLog(parsing: text, file: "late.jsonl"))
        #expect(try replayer.step().isEmpty)
        #expect(try replayer.step().isEmpty)
        #expect(throws: EventLogError(file: "late.jsonl", line: 4, message: "no subscriber named \"default\" (it never subscribed, or has unsubscribed)")) {
            try replayer.step()
        }
    }

    @Test func subscribingAnExistingNameIsABadLine() throws {
        let text = """
            {"format": "notifybus-log", "version": 1}
            {"t": 0, "type": "subscribe", "subscriber": "a"}
            {"t": 0, "type": "subscribe", "subscriber": "a"}
            """
        #expect(throws: EventLogError.self) { try LogReplayer(log: try EventLog(parsing: text)).run { _ in } }
    }

    @Test func thereAreExampleLogs() {
        #expect(Paths.exampleLogNames.count >= 5)
    }
}
