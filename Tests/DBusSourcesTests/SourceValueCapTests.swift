import Logging
import NotifyBus
import TestSupport
import Testing

@testable import NotifyBusSources

/// specification: Source keys and values: no source publishes a value whose compact JSON text is longer than 65,536
/// bytes; every built-in source publishes through `publishSourceValue`, which keeps the rule.
@Suite("The 64 KiB value cap")
struct SourceValueCapTests {
    @Test func upTo64KiBOfJSONIsPublishedALongerValueIsLoggedAndTheKeyKeepsItsValue() {
        let bus = NotificationBus()
        let log = LogRecorder()
        let problems = SourceProblems(logger: log.logger)
        let fits = JSONValue.string(String(repeating: "a", count: 65_534))  // 65,536 bytes with its quotes
        #expect(fits.jsonText.utf8.count == 65_536)
        #expect(bus.publishSourceValue("memory/pressure", fits, problem: problems))
        let over = JSONValue.string(String(repeating: "a", count: 65_535))
        #expect(!bus.publishSourceValue("memory/pressure", over, problem: problems))
        #expect(bus.value(forKey: "memory/pressure") == fits)
        // The line names the key: a log handler that prints the message alone (standard error's)
        // still says which key.
        #expect(log.recent == ["key memory/pressure: a value of 65537 bytes of JSON is longer than 65536: not published"])
        #expect(log.all.last?.metadata["key"] == "memory/pressure")
    }

    /// The length is that of the text as written: escapes count with every byte.
    @Test func escapesAndNestingCountAsWritten() {
        let bus = NotificationBus()
        let problems = SourceProblems(logger: LogRecorder().logger)
        let control = JSONValue.string(String(repeating: "\u{1}", count: 10_922))  // \u0001 each: 65,534 bytes
        #expect(control.jsonText.utf8.count == 65_534)
        #expect(bus.publishSourceValue("a", control, problem: problems))
        #expect(!bus.publishSourceValue("b", .string(String(repeating: "\u{1}", count: 10_923)), problem: problems))
        // "k10000":1 and a comma: 11 bytes each.
        let members = (10_000..<16_000).map { ("k\($0)", JSONValue.integer(1)) }
        let object = JSONValue.object(JSONObject(members))
        #expect(object.jsonText.utf8.count == 65_999 + 2)
        #expect(!bus.publishSourceValue("c", object, problem: problems))
        #expect(bus.value(forKey: "b") == nil && bus.value(forKey: "c") == nil)
    }
}
