import Foundation
import NotifyBus
import NotifyBusLog
import NotifyBusSources
import Testing
@testable import notifywatch

/// The example logs and their golden output, found from this source file.
private enum ExampleLogs {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Examples/logs")

    /// The example logs, by name without extension.
    static var names: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.hasSuffix(".jsonl") }.map { String($0.dropLast(6)) }.sorted()
    }
}

extension ReplayLine {
    /// The line as `notifywatch replay --json` prints it, without the newline.
    fileprivate var contractLine: String {
        var encoder = JSONLinesWriter()
        var bytes: [UInt8] = []
        encoder.encode(event, t: t.json, subscriber: subscriber, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// A small deterministic generator, so that a failing case can be reproduced from its seed.
private struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite struct JSONLinesWriterTests {
    @Test func replayerStepsOneRecordAtATime() throws {
        let log = EventLog(entries: [
            LogEntry(t: LogTime(seconds: 0), record: .event(key: "a", value: 1, source: nil)),
            LogEntry(t: LogTime(seconds: 1), record: .suspend(subscriber: "default")),
            LogEntry(t: LogTime(seconds: 2), record: .event(key: "a", value: 2, source: nil)),
            LogEntry(t: LogTime(seconds: 3), record: .event(key: "a", value: 3, source: nil)),
            LogEntry(t: LogTime(seconds: 4), record: .resume(subscriber: "default")),
        ])
        let replayer = LogReplayer(log: log)
        #expect(replayer.subscriberNames == ["default"])
        #expect(try replayer.step().map(\.contractLine) == [#"{"type":"notification","t":0,"subscriber":"default","key":"a","value":1,"coalesced":1}"#])
        #expect(try replayer.step().map(\.contractLine) == [#"{"type":"suspended","t":1,"subscriber":"default"}"#])
        #expect(try replayer.step().isEmpty)
        #expect(try replayer.step().isEmpty)
        #expect(replayer.subscription(named: "default")?.isSuspended == true)
        #expect(try replayer.step().map(\.contractLine) == [
            #"{"type":"resumed","t":4,"subscriber":"default","flushed":1}"#,
            #"{"type":"notification","t":4,"subscriber":"default","key":"a","value":3,"coalesced":2,"previous":1}"#,
        ])
        #expect(replayer.isFinished)
        #expect(try replayer.step().isEmpty)
    }

    @Test func timesAndNumbersKeepTheirJSONForm() throws {
        let text = """
            {"format": "notifybus-log", "version": 1}
            {"t": 0.5, "type": "event", "key": "a", "value": 1}
            {"t": 2, "type": "event", "key": "a", "value": 1.0}
            {"t": 2.50, "type": "event", "key": "a", "value": 1.25}
            """
        var lines: [String] = []
        try LogReplayer(log: try EventLog(parsing: text)).run { lines += $0.map(\.contractLine) }
        #expect(lines == [
            #"{"type":"notification","t":0.5,"subscriber":"default","key":"a","value":1,"coalesced":1}"#,
            #"{"type":"notification","t":2,"subscriber":"default","key":"a","value":1.0,"coalesced":1,"previous":1}"#,
            #"{"type":"notification","t":2.5,"subscriber":"default","key":"a","value":1.25,"coalesced":1,"previous":1.0}"#,
        ])
    }

    @Test(arguments: ExampleLogs.names)
    func exampleLogsReplayToTheirGoldenOutput(name: String) throws {
        let text = try String(contentsOf: ExampleLogs.directory.appendingPathComponent("\(name).jsonl"), encoding: .utf8)
        let expected = try String(contentsOf: ExampleLogs.directory.appendingPathComponent("expected/\(name).json-lines"), encoding: .utf8)
        var lines: [String] = []
        try LogReplayer(log: try EventLog(parsing: text, file: name)).run { lines += $0.map(\.contractLine) }
        #expect(lines.joined(separator: "\n") + "\n" == expected)
    }

    /// The lines as the specification describes them (notifywatch output), built as JSON objects member by member.
    private static func reference(
        _ event: SubscriptionEvent, t: JSONValue, subscriber: String, time: String?
    ) -> String {
        var object: JSONObject
        switch event {
        case .notification(let n):
            object = ["type": "notification", "t": t]
            if let time { object["time"] = .string(time) }
            object["subscriber"] = .string(subscriber)
            object["key"] = .string(n.key)
            object["value"] = n.value
            object["coalesced"] = .integer(Int64(n.coalesced))
            if let previous = n.previous { object["previous"] = previous }
        case .suspended:
            object = ["type": "suspended", "t": t, "subscriber": .string(subscriber)]
        case .resumed(_, let flushed):
            object = ["type": "resumed", "t": t, "subscriber": .string(subscriber), "flushed": .integer(Int64(flushed))]
        case .resync(_, let reason):
            object = ["type": "resync", "t": t, "subscriber": .string(subscriber), "reason": .string(reason.rawValue)]
        }
        return JSONValue.object(object).jsonText
    }

    private static let texts = ["", "a", "battery/BAT0/state", "quote \" and \\", "line\nbreak\ttab", "\u{01}\u{1F}", "é ✓ 😀", "de_DE.UTF-8"]

    private static func randomValue(_ random: inout SplitMix, depth: Int = 0) -> JSONValue {
        switch Int.random(in: 0..<(depth < 2 ? 8 : 6), using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .integer(Int64.random(in: Int64.min...Int64.max, using: &random))
        case 3: return .number([0.5, 1.0, -2.25, 1e16, 0.1, 123456.789][Int.random(in: 0..<6, using: &random)])
        case 4, 5: return .string(texts.randomElement(using: &random)!)
        case 6: return .array((0..<Int.random(in: 0..<4, using: &random)).map { _ in randomValue(&random, depth: depth + 1) })
        default:
            var object: JSONObject = [:]
            for _ in 0..<Int.random(in: 0..<4, using: &random) {
                object[texts.randomElement(using: &random)!] = randomValue(&random, depth: depth + 1)
            }
            return .object(object)
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func linesMatchTheContractObjectsByteForByte(seed: UInt64) {
        var random = SplitMix(state: seed)
        var encoder = JSONLinesWriter()
        var buffer: [UInt8] = []
        var expected: [UInt8] = []
        for _ in 0..<500 {
            let event: SubscriptionEvent
            switch Int.random(in: 0..<6, using: &random) {
            case 0: event = .suspended(time: .seconds(1))
            case 1: event = .resumed(time: .seconds(2), flushed: Int.random(in: 0..<1_000, using: &random))
            case 2: event = .resync(time: .seconds(3), reason: .limit)
            default:
                event = .notification(BusNotification(
                    key: Self.texts.randomElement(using: &random)!, value: Self.randomValue(&random),
                    previous: Bool.random(using: &random) ? Self.randomValue(&random) : nil,
                    coalesced: Int.random(in: 0..<100, using: &random), firstEventTime: .zero, lastEventTime: .zero,
                    time: .zero, kind: .flushed))
            }
            let t: JSONValue = Bool.random(using: &random) ? .integer(Int64.random(in: 0..<100_000, using: &random)) : .number(0.25)
            let time = Bool.random(using: &random) ? "2024-05-01T09:00:00.250+02:00" : nil
            let subscriber = Self.texts.randomElement(using: &random)!
            // Lines follow one another in one reused buffer.
            encoder.encode(event, t: t, subscriber: subscriber, time: time, into: &buffer)
            buffer.append(UInt8(ascii: "\n"))
            expected += Array(Self.reference(event, t: t, subscriber: subscriber, time: time).utf8) + [UInt8(ascii: "\n")]
        }
        #expect(buffer == expected)
    }

    @Test func sourceLinesHaveTheirMembersInContractOrder() {
        var encoder = JSONLinesWriter()
        var bytes: [UInt8] = []
        encoder.encodeSource("power", .running, t: .integer(0), into: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"type":"source","t":0,"source":"power","status":"running"}"#)
        bytes = []
        encoder.encodeSource("locale", .unavailable(reason: #"no "org.freedesktop.locale1""#), t: .number(1.5), into: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self)
            == #"{"type":"source","t":1.5,"source":"locale","status":"unavailable","reason":"no \"org.freedesktop.locale1\""}"#)
        bytes = []
        encoder.encodeSource("sensors", .failed(reason: "x"), t: .integer(3), into: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"type":"source","t":3,"source":"sensors","status":"failed","reason":"x"}"#)
    }

    @Test func sourceListingsHaveKeysAndNoTime() {
        var encoder = JSONLinesWriter()
        var bytes: [UInt8] = []
        encoder.encodeListing("power", .running, keys: ["battery/*/state", "power/*/online"], into: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self)
            == #"{"type":"source","source":"power","status":"running","keys":["battery/*/state","power/*/online"]}"#)
        bytes = []
        encoder.encodeListing("locale", .unavailable(reason: "no bus"), keys: [], into: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self)
            == #"{"type":"source","source":"locale","status":"unavailable","reason":"no bus","keys":[]}"#)
    }

    @Test func thereAreExampleLogs() {
        #expect(ExampleLogs.names.count >= 5)
    }
}
