import NotifyBus
import NotifyBusSources
import Testing

@testable import NotifyBusSources

private typealias Machine = ThermalStateMachine

/// A zone at `temperature` (m°C) with these trip points.
private func zone(_ temperature: Int, _ trips: [(String, Int)]) -> ThermalLevel {
    ThermalZoneReading(
        name: "thermal_zone0", temperature: temperature,
        trips: trips.map { ThermalZoneReading.Trip(type: $0.0, temperature: $0.1) }
    ).level
}

@Suite("Thermal zones and state")
struct ThermalStateMachineTests {
    /// Each boundary of the specification's (Source keys and values) rule, on a zone with a passive trip at 90 °C, a hot one
    /// at 100 °C and a critical one at 105 °C.
    @Test(arguments: [
        (0, ThermalLevel.nominal), (79_999, .nominal), (80_000, .fair), (89_999, .fair), (90_000, .serious),
        (99_999, .serious), (100_000, .critical), (120_000, .critical), (-5_000, .nominal),
    ] as [(Int, ThermalLevel)])
    func tripPointBoundaries(temperature: Int, level: ThermalLevel) {
        #expect(zone(temperature, [("passive", 90_000), ("hot", 100_000), ("critical", 105_000)]) == level)
    }

    @Test func theLowestPassiveTripCountsAndActiveOnesAndUnusedOnesDoNot() {
        let trips = [("active", 50_000), ("passive", 95_000), ("passive", 85_000), ("critical", 0), ("hot", -274_000)]
        #expect(zone(60_000, trips) == .nominal)
        #expect(zone(75_000, trips) == .fair)
        #expect(zone(85_000, trips) == .serious)
        #expect(zone(200_000, trips) == .serious)  // no usable hot or critical trip
        #expect(zone(200_000, []) == .nominal)
        #expect(zone(105_000, [("critical", 105_000)]) == .critical)
    }

    @Test func zonesAreReadFromSysfsAttributes() throws {
        let attributes = [
            "temp": "91000\n", "trip_point_0_type": "critical\n", "trip_point_0_temp": "105000",
            "trip_point_1_type": "passive", "trip_point_1_temp": "90000",
            "trip_point_2_type": "passive", "trip_point_2_temp": "n/a",
            // Not read: index 3 is missing.
            "trip_point_4_type": "passive", "trip_point_4_temp": "50000",
        ]
        let reading = try ThermalZoneReading(name: "thermal_zone0") { attributes[$0] }
        #expect(reading.temperature == 91_000)
        #expect(reading.trips == [.init(type: "critical", temperature: 105_000), .init(type: "passive", temperature: 90_000)])
        #expect(reading.level == .serious)
        #expect(throws: ThermalZoneReading.Problem("no readable temp")) { try ThermalZoneReading(name: "z") { _ in nil } }
        #expect(throws: ThermalZoneReading.Problem(#"temp is not a number: "hot""#)) {
            try ThermalZoneReading(name: "z") { $0 == "temp" ? "hot\n" : nil }
        }
    }

    @Test(arguments: [
        ("", ThermalLevel.nominal), ("lap-detected", .nominal), ("high-operating-temperature", .serious),
        ("lap-detected,high-operating-temperature", .serious), ("lap-detected, high-operating-temperature", .serious),
        ("high-operating-temperature-soon", .nominal),
    ] as [(String, ThermalLevel)])
    func performanceDegradedFloors(reasons: String, level: ThermalLevel) {
        #expect(ThermalLevel.floor(performanceDegraded: reasons) == level)
    }

    @Test func nothingIsPublishedUntilBothHalvesAreKnownThenTheStateThenRunning() {
        var machine = Machine()
        #expect(machine.zonesRead([:]) == [])
        #expect(machine.daemonChanged(.absent) == [.publish(.nominal), .reportRunning])
        #expect(machine.daemonChanged(.degraded("high-operating-temperature")) == [.publish(.serious)])

        var other = Machine()
        #expect(other.daemonChanged(.degraded("high-operating-temperature")) == [])
        #expect(other.zonesRead(["thermal_zone0": .fair]) == [.startRereadTimer, .publish(.serious), .reportRunning])
    }

    @Test func theStateIsTheWorstOfTheZonesAndTheDaemon() {
        var machine = Machine()
        _ = machine.daemonChanged(.absent)
        #expect(machine.zonesRead(["thermal_zone0": .nominal, "thermal_zone1": .fair, "thermal_zone2": nil])
            == [.startRereadTimer, .publish(.fair), .reportRunning])
        #expect(machine.zoneRead("thermal_zone0", .critical) == [.publish(.critical)])
        #expect(machine.daemonChanged(.degraded("high-operating-temperature")) == [])
        #expect(machine.zoneRead("thermal_zone0", .nominal) == [.publish(.serious)])
        // The daemon leaves: it no longer counts.
        #expect(machine.daemonChanged(.absent) == [.publish(.fair)])
        // An unreadable zone counts as present, at no level.
        #expect(machine.zoneRead("thermal_zone1", nil) == [.publish(.nominal)])
    }

    @Test func theRereadTimerRunsOnlyWhileAZoneExists() {
        var machine = Machine()
        #expect(machine.zonesRead([:]) == [])
        #expect(machine.zoneRead("thermal_zone0", .nominal) == [.startRereadTimer])
        #expect(machine.zoneRead("thermal_zone1", .nominal) == [])
        #expect(machine.zoneRemoved("thermal_zone0") == [])
        #expect(machine.zoneRemoved("thermal_zone1") == [.stopRereadTimer])
        #expect(machine.zonesRead(["thermal_zone3": nil]) == [.startRereadTimer])
        #expect(machine.zonesRead([:]) == [.stopRereadTimer])
    }
}
