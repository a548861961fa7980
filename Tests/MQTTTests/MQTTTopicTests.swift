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
