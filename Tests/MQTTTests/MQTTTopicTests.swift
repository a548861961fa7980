import Mosquitto
import NotifyBus
import NotifyBusMQTT
import Testing

@Suite struct MQTTTopicTests {
    @Test func keysAreEscapedIntoTopicsAndBack() {
        let key = "odd/a+b/c#d/50%/nul\0end/ünï"
        let topic = MQTTTopic.topic(prefix: "fleet/kiosks", hostID: "k1", key: key)
        #expect(topic == "fleet/kiosks/k1/odd/a%2Bb/c%23d/50%25/nul%00end/ünï")
        #expect(MQTTTopic.unescape(String(topic.dropFirst("fleet/kiosks/k1/".count))) == key)
        #expect(MQTTTopic.escape("battery/BAT0/level") == "battery/BAT0/level")
        #expect(MQTTTopic.unescape("a%2bb%41%2") == "a+b%41%2")
        // Only a letter is lowered: `%2` and a control character are not `%23`.
        #expect(MQTTTopic.unescape("a%2\u{13}b") == "a%2\u{13}b")
    }

    @Test func hostIDsAndPrefixesThatCannotBeTopicLevelsAreRefused() {
        #expect(MQTTTopic.hostIDProblem("kiosk-7") == nil)
        for bad in ["a/b", "a+b", "a#", "a\0b", ""] { #expect(MQTTTopic.hostIDProblem(bad) != nil) }
        #expect(MQTTTopic.prefixProblem("fleet/kiosks") == nil)
        for bad in ["", "a/+", "#", "/a", "a/"] { #expect(MQTTTopic.prefixProblem(bad) != nil) }
    }

    @Test func patternsBecomeFilters() {
        #expect(MQTTTopic.filter(for: "**") == "#")
        #expect(MQTTTopic.filter(for: "battery/*/level") == "battery/+/level")
        #expect(MQTTTopic.filter(for: "a/**/b") == "a/#")
        #expect(MQTTTopic.filter(for: "c+d") == "c%2Bd")
    }

    @Test func payloadsRoundTrip() throws {
        let payload = MQTTPayload(value: ["level": 0.5, "unit": "lux"], time: "2026-11-26T10:00:00.125Z", coalesced: 3)
        #expect(String(decoding: payload.bytes, as: UTF8.self)
            == #"{"value":{"level":0.5,"unit":"lux"},"time":"2026-11-26T10:00:00.125Z","coalesced":3}"#)
        #expect(MQTTPayload(bytes: payload.bytes) == payload)
        #expect(MQTTPayload(bytes: Array("not json".utf8)) == nil)
        #expect(MQTTPayload(bytes: Array("[1]".utf8)) == nil)
        #expect(MQTTPayload(bytes: Array(#"{"value": 1}"#.utf8))?.coalesced == 1)
    }
}

@Suite struct FleetReaderTests {
    func message(_ topic: String, _ payload: String, retained: Bool = false) -> MosquittoMessage {
        MosquittoMessage(topic: topic, payload: Array(payload.utf8), retained: retained, qos: 1)
    }

    @Test func selectionsAndFilters() throws {
        #expect(try FleetSelection(parsing: "*/battery/**") == FleetSelection(host: "*", pattern: "battery/**"))
        #expect(try FleetSelection(parsing: "kiosk-1") == FleetSelection(host: "kiosk-1", pattern: .all))
        #expect(throws: MQTTConfigurationError.self) { try FleetSelection(parsing: "a+b/**") }
        #expect(throws: MQTTConfigurationError.self) { try FleetSelection(parsing: "*/a//b") }
        let reader = FleetReader(prefix: "fleet/x", selections: [.everything, try FleetSelection(parsing: "*/battery/*")])
        #expect(reader.filters == ["fleet/x/+/$online", "fleet/x/+/#", "fleet/x/+/battery/+"])
    }

    @Test func whatIsNotTheLinksIsSkipped() throws {
        var reader = FleetReader(prefix: "nb", selections: [try FleetSelection(parsing: "*/battery/*")])
        #expect(reader.read(message("nb/h/battery/BAT0", "not json")) == nil)
        #expect(reader.read(message("nb/h/battery/BAT0", #"{"no":"value"}"#)) == nil)
        #expect(reader.read(message("nb/h/battery/BAT0/level", #"{"value":1}"#)) == nil)
        #expect(reader.read(message("other/h/battery/BAT0", #"{"value":1}"#)) == nil)
        #expect(reader.read(message("nb/h", #"{"value":1}"#)) == nil)
        #expect(reader.read(message("nb/h/$online", "maybe")) == nil)
        #expect(reader.read(message("nb/h/$online", "true")) == .host("h", online: true))
        #expect(reader.read(message("nb/h/$online", "true", retained: true)) == nil)
        let first = reader.read(message("nb/h/battery/a%2Bb", #"{"value":1,"time":"T","coalesced":4}"#))
        #expect(first == .notification(FleetNotification(
            host: "h", key: "battery/a+b", value: 1, coalesced: 4, time: "T", previous: nil, retained: false)))
        // A reconnection's retained copy of what was received is skipped, as is a live copy (a
        // broker sends one per matching subscription); a new value is not.
        #expect(reader.read(message("nb/h/battery/a%2Bb", #"{"value":1,"time":"T","coalesced":4}"#, retained: true)) == nil)
        #expect(reader.read(message("nb/h/battery/a%2Bb", #"{"value":1,"time":"T","coalesced":4}"#)) == nil)
        if case .notification(let next)? = reader.read(message("nb/h/battery/a%2Bb", #"{"value":2,"time":"U","coalesced":1}"#)) {
            #expect(next.previous == 1)
        } else {
            Issue.record("no notification")
        }
    }

    /// Whatever a broker sends (any topic under the prefix, any bytes) is read or skipped, never a crash.
    @Test func arbitraryMessagesAreReadOrSkipped() throws {
        var generator = SystemRandomNumberGenerator()
        var reader = FleetReader(prefix: "nb", selections: [.everything])
        let pieces = ["nb", "h", "$online", "%2B", "%", "%2", "a", "", "+", "#", "\u{0}", "ü", "/"]
        let payloads = [#"{"value":"#, "true", "false", #"{"value":1,"coalesced":-5}"#, #"{"value":[1,{"a":null}],"time":3}"#, "\u{FF}"]
        var read = 0
        for _ in 0..<20_000 {
            let levels = (0..<Int.random(in: 1...6, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }
            var bytes = Array((payloads.randomElement(using: &generator) ?? "").utf8)
            for _ in 0..<Int.random(in: 0...3, using: &generator) {
                bytes.insert(UInt8.random(in: 0...255, using: &generator), at: Int.random(in: 0...bytes.count, using: &generator))
            }
            let message = MosquittoMessage(
                topic: levels.joined(separator: "/"), payload: bytes, retained: Bool.random(using: &generator), qos: 1)
            if reader.read(message) != nil { read += 1 }
        }
        #expect(read > 0)
    }
}
