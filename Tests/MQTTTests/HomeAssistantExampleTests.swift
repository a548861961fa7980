import NotifyBus
import NotifyBusMQTT
import TestSupport
import Testing

/// The Home Assistant sensor of the specification article Publishing a fleet to MQTT reads what a link really publishes.
@Suite(.serialized) struct HomeAssistantExampleTests {
    static let article: String = {
        let file = "\(#filePath)"
        let tests = file[..<(file.lastIndex(of: "/") ?? file.endIndex)]
        return tests + "/../../Sources/NotifyBus/NotifyBus.docc/PublishingAFleet.md"
    }()

    /// The value of `name:` in the article's YAML block, unquoted.
    func yaml(_ name: String) throws -> String {
        let text = try #require(readFile(Self.article))
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex(of: "```yaml"))
        let block = lines[(start + 1)...].prefix { $0 != "```" }
        let line = try #require(block.first { $0.drop { $0 == " " }.hasPrefix("\(name):") })
        var value = line.drop { $0 == " " }.dropFirst(name.count + 1).drop { $0 == " " }
        if value.hasPrefix("\""), value.hasSuffix("\"") { value = value.dropFirst().dropLast() }
        return String(value)
    }

    @Test func theSensorReadsTheRetainedBatteryLevelAndTheAvailability() async throws {
        let broker = try await MosquittoBroker()
        let bus = NotificationBus()
        bus.publish("battery/BAT0/level", 0.87)
        let bed = try LinkBed(broker: broker, bus: bus, hostID: "kiosk-7", prefix: "notifybus")
        #expect(await bed.waitUntilSettled())
        let retained = try await broker.retained("notifybus/kiosk-7/#")

        let state = try yaml("state_topic")
        #expect(state == bed.topic("battery/BAT0/level"))
        // `value_json.value * 100`: the payload's `value` is the level as a number.
        let level = try #require(retained.payload(state)?.value.doubleValue)
        #expect(level == 0.87 && (0...1).contains(level))
        #expect(try yaml("value_template") == "{{ (value_json.value * 100) | round(0) }}")

        let availability = try yaml("availability_topic")
        #expect(retained[availability] == (try yaml("payload_available")))
        await bed.shutdown()
        #expect(try await broker.retained(availability)[availability] == (try yaml("payload_not_available")))
    }
}
