import NotifyBus
import TestSupport
import Testing

// A source says `running` only once its first values are published (specification: Source keys and values): the probe
// writes the bus's store as the source reports each status, on its loop thread.

/// The members of a JSON object, whatever their order.
func members(_ value: JSONValue?) -> [String: JSONValue]? {
    guard case .object(let object)? = value else { return nil }
    return Dictionary(object.map { ($0.key, $0.value) }) { $1 }
}

extension PowerSupplySourceTests {
    @Test func everySuppliesValuesArePublishedBeforeRunning() throws {
        let testbed = try Testbed()
        try testbed.add("AC", ["type": "Mains", "online": "1"])
        try testbed.add("BAT0", ["type": "Battery", "present": "1", "status": "Charging", "capacity": "40"])
        let probe = try Probe(testbed: testbed)
        #expect(members(probe.storeWhenFirst("running")) == [
            "power/AC/online": true, "battery/BAT0/state": "charging", "battery/BAT0/level": 0.4,
        ])
        #expect(probe.quit() == 0)
    }
}

extension DisplaySourceTests {
    @Test func everyBacklightIsPublishedBeforeRunning() throws {
        let testbed = try Testbed()
        try testbed.add(
            "intel_backlight", subsystem: "backlight",
            attributes: ["max_brightness": "1000", "actual_brightness": "250", "brightness": "250"], properties: [:])
        let probe = try Probe(testbed: testbed, arguments: ["--source", "display"])
        #expect(members(probe.storeWhenFirst("running")) == ["display/intel_backlight/brightness": 0.25])
        #expect(probe.quit() == 0)
    }
}
