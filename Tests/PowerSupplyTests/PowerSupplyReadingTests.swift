import NotifyBus
import NotifyBusSources
import Testing

/// A lookup over fixed properties and attributes, as a device would answer it.
private func lookup(properties: [String: String] = [:], attributes: [String: String] = [:])
    -> (String, String) -> String?
{
    { property, attribute in properties[property] ?? attributes[attribute] }
}

@Suite("PowerSupplyReading (the specification's mapping of source keys)")
struct PowerSupplyReadingTests {
    @Test(arguments: [
        ("Discharging", "unplugged"), ("Charging", "charging"), ("Full", "full"),
        ("Not charging", "not-charging"), ("Unknown", "unknown"), ("", "unknown"),
        ("discharging", "unknown"), ("Full\n", "full"),
    ])
    func statusMapsOntoState(status: String, state: String) {
        #expect(PowerSupplyReading.state(forStatus: status) == state)
    }

    @Test func missingStatusIsUnknown() {
        #expect(PowerSupplyReading.state(forStatus: nil) == "unknown")
        let reading = PowerSupplyReading(name: "BAT0", lookup: lookup(attributes: ["type": "Battery"]))
        #expect(reading?.state == "unknown")
        #expect(reading?.level == nil)
        #expect(reading?.values.map(\.key) == ["battery/BAT0/state"])
    }

    @Test func levelPrefersCapacityThenEnergyThenCharge() {
        typealias R = PowerSupplyReading
        #expect(R.level(capacity: "80", energyNow: "1", energyFull: "4", chargeNow: "1", chargeFull: "2") == 0.8)
        #expect(R.level(capacity: nil, energyNow: "15000000", energyFull: "60000000", chargeNow: "1", chargeFull: "2") == 0.25)
        #expect(R.level(capacity: nil, energyNow: "1", energyFull: "0", chargeNow: "3", chargeFull: "4") == 0.75)
        #expect(R.level(capacity: "n/a", energyNow: nil, energyFull: nil, chargeNow: "1", chargeFull: "2") == 0.5)
        #expect(R.level(capacity: nil, energyNow: nil, energyFull: "5", chargeNow: nil, chargeFull: nil) == nil)
    }

    @Test func levelIsClampedToZeroThroughOne() {
        typealias R = PowerSupplyReading
        #expect(R.level(capacity: "101", energyNow: nil, energyFull: nil, chargeNow: nil, chargeFull: nil) == 1)
        #expect(R.level(capacity: "-3", energyNow: nil, energyFull: nil, chargeNow: nil, chargeFull: nil) == 0)
        #expect(R.level(capacity: nil, energyNow: "70", energyFull: "60", chargeNow: nil, chargeFull: nil) == 1)
    }

    @Test func onlineIsZeroOrNot() {
        #expect(PowerSupplyReading.online("0") == false)
        #expect(PowerSupplyReading.online("1") == true)
        #expect(PowerSupplyReading.online("2\n") == true)
        #expect(PowerSupplyReading.online("yes") == nil)
        #expect(PowerSupplyReading.online(nil) == nil)
    }

    @Test func batteryGetsStateAndLevelKeys() throws {
        let reading = try #require(PowerSupplyReading(name: "BAT1", lookup: lookup(
            properties: ["POWER_SUPPLY_TYPE": "Battery", "POWER_SUPPLY_STATUS": "Charging"],
            attributes: ["capacity": "64", "status": "Discharging"])))
        #expect(reading.kind == .battery)
        #expect(reading.values.map(\.key) == ["battery/BAT1/state", "battery/BAT1/level"])
        // The property wins over the attribute; the attribute fills in what the properties lack.
        #expect(reading.values.map(\.value) == ["charging", 0.64])
        #expect(reading.keys == ["battery/BAT1/state", "battery/BAT1/level"])
    }

    @Test(arguments: ["Mains", "USB", "USB_C", "USB_PD", "USB_DCP", "Wireless", "UPS", "BrickID"])
    func nonBatteryTypesWithOnlineGetTheOnlineKey(type: String) throws {
        let reading = try #require(PowerSupplyReading(name: "ADP1", lookup: lookup(
            properties: ["POWER_SUPPLY_TYPE": type, "POWER_SUPPLY_ONLINE": "1"])))
        #expect(reading.kind == .lineSupply)
        #expect(reading.values.map(\.key) == ["power/ADP1/online"])
        #expect(reading.values.map(\.value) == [true])
    }

    @Test func devicesThatMapOntoNoKeyAreIgnored() {
        #expect(PowerSupplyReading(name: "x", lookup: lookup(attributes: ["type": "Unknown"])) == nil)
        #expect(PowerSupplyReading(name: "x", lookup: lookup()) == nil)
        #expect(PowerSupplyReading(name: "x", lookup: lookup(attributes: ["type": "USB", "online": "?"])) == nil)
    }
}
