import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

// ThermalSource against real libudev and umockdev test beds of `thermal` zones (run in
// PowerSupplyProbe under umockdev's preload, `--source thermal`), and python-dbusmock stand-ins of
// power-profiles-daemon on a private system bus.

private let oldName = ("net.hadess.PowerProfiles", "/net/hadess/PowerProfiles")
private let newName = ("org.freedesktop.UPower.PowerProfiles", "/org/freedesktop/UPower/PowerProfiles")

/// The template of power-profiles-daemon under its new name (DBusSourcesTests' fixture).
private let newNameTemplate: String = {
    let file = "\(#filePath)"
    return String(file[..<(file.lastIndex(of: "/") ?? file.endIndex)]) + "/../DBusSourcesTests/Fixtures/upower_power_profiles_daemon.py"
}()

extension Testbed {
    /// Adds `thermal_zone<N>` with its `type`, `temp` and trip points (`trip_point_K_type`, `_temp`).
    fileprivate func addZone(_ name: String, type: String = "acpitz", temperature: Int, trips: [(String, Int)] = []) throws {
        var attributes = ["type": type, "temp": "\(temperature)", "mode": "enabled"]
        for (index, trip) in trips.enumerated() {
            attributes["trip_point_\(index)_type"] = trip.0
            attributes["trip_point_\(index)_temp"] = "\(trip.1)"
        }
        try add(name, subsystem: "thermal", attributes: attributes, properties: [:])
    }

    /// Writes the zone's `temp`, with a `change` uevent unless `announced` is false (kernels
    /// rarely announce a temperature change).
    fileprivate func setTemperature(_ name: String, _ temperature: Int, announced: Bool = true) throws {
        try set(name, attributes: ["temp": "\(temperature)"], uevent: announced ? "change" : nil)
    }
}

@Suite("ThermalSource under umockdev", .serialized)
struct ThermalSourceTests {
    let bus: PrivateBus

    init() throws {
        bus = try PrivateBus()
    }

    func probe(_ testbed: Testbed, rereadInterval: Int = 3600) throws -> Probe {
        try Probe(
            testbed: testbed, arguments: ["--source", "thermal", "--reread-interval", "\(rereadInterval)"],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
    }

    /// Reads until the source says it is running; returns the notifications before that.
    func started(_ probe: Probe, sourceLocation: SourceLocation = #_sourceLocation) -> [Note] {
        probe.read(until: { $0["type"] == "source" && $0["status"] == "running" }, sourceLocation: sourceLocation)
            .compactMap(Note.init)
    }

    func startDaemon(old degraded: String) async throws -> MockService {
        try await MockService(bus: bus, template: "power_profiles_daemon", name: oldName.0, parameters: #"{"PerformanceDegraded": "\#(degraded)"}"#)
    }

    func startDaemon(new degraded: String) async throws -> MockService {
        try await MockService(bus: bus, template: newNameTemplate, name: newName.0, parameters: #"{"PerformanceDegraded": "\#(degraded)"}"#)
    }

    /// Sets `PerformanceDegraded` on the stand-in of `name` (one `PropertiesChanged`).
    func setDegraded(_ name: (String, String), _ reasons: String) throws {
        try runPythonDBus(address: bus.address, """
            daemon = bus.get_object('\(name.0)', '\(name.1)')
            daemon.UpdateProperties('\(name.0)', {'PerformanceDegraded': '\(reasons)'}, dbus_interface='org.freedesktop.DBus.Mock')
            """)
    }

    @Test func withNeitherZonesNorTheDaemonItIsRunningNominal() throws {
        let testbed = try Testbed()
        let probe = try probe(testbed)
        // Connecting to the bus first (shown as unavailable), then running.
        #expect(probe.start().status?["reason"] == "connecting to the system bus")
        #expect(started(probe) == [Note("thermal/state", "nominal")])
        #expect(members(probe.storeWhenFirst("running")) == ["thermal/state": "nominal"])
        #expect(probe.quit() == 0)
    }

    /// Two zones and a cooling device; each trip-point boundary crossed with a `change` uevent;
    /// the worst zone counts, and only changes of the state are published.
    @Test func theWorstZoneCountsAtEachTripBoundary() throws {
        let testbed = try Testbed()
        try testbed.addZone("thermal_zone0", temperature: 40_000, trips: [("critical", 105_000), ("passive", 90_000)])
        try testbed.addZone("thermal_zone1", type: "x86_pkg_temp", temperature: 45_000, trips: [("active", 50_000), ("passive", 95_000)])
        try testbed.add("cooling_device0", subsystem: "thermal", attributes: ["type": "Processor", "cur_state": "0"], properties: [:])
        let probe = try probe(testbed)
        #expect(started(probe) == [Note("thermal/state", "nominal")])
        #expect(members(probe.storeWhenFirst("running")) == ["thermal/state": "nominal"])

        try testbed.setTemperature("thermal_zone0", 79_999)
        #expect(probe.notesUntilSynced().isEmpty)
        try testbed.setTemperature("thermal_zone0", 80_000)
        #expect(probe.notes(1) == [Note("thermal/state", "fair", previous: "nominal")])
        try testbed.setTemperature("thermal_zone0", 89_999)
        #expect(probe.notesUntilSynced().isEmpty)
        try testbed.setTemperature("thermal_zone0", 90_000)
        #expect(probe.notes(1) == [Note("thermal/state", "serious", previous: "fair")])
        // The other zone turns fair (85 °C, 10 °C below its passive trip): the worst stays serious.
        try testbed.setTemperature("thermal_zone1", 86_000)
        #expect(probe.notesUntilSynced().isEmpty)
        try testbed.setTemperature("thermal_zone0", 40_000)
        #expect(probe.notes(1) == [Note("thermal/state", "fair", previous: "serious")])
        // Past its active trip (a fan): still only fair, then nominal.
        try testbed.setTemperature("thermal_zone1", 60_000)
        #expect(probe.notes(1) == [Note("thermal/state", "nominal", previous: "fair")])
        try testbed.setTemperature("thermal_zone0", 105_000)
        #expect(probe.notes(1) == [Note("thermal/state", "critical", previous: "nominal")])
        try testbed.setTemperature("thermal_zone0", 104_999)
        #expect(probe.notes(1) == [Note("thermal/state", "serious", previous: "critical")])
        // A cooling device's uevent changes nothing; a re-read of the same state publishes nothing.
        try testbed.uevent("cooling_device0")
        #expect(probe.notesUntilSynced().isEmpty)
        #expect(probe.command("reread").compactMap(Note.init).isEmpty)
        #expect(probe.logged.isEmpty)
        #expect(probe.quit() == 0)
    }

    @Test func zonesComeAndGoAndAnUnreadableOneIsSkippedAndReported() throws {
        let testbed = try Testbed()
        let probe = try probe(testbed)
        #expect(started(probe) == [Note("thermal/state", "nominal")])
        try testbed.addZone("thermal_zone3", temperature: 101_000, trips: [("hot", 100_000)])
        #expect(probe.notes(1) == [Note("thermal/state", "critical", previous: "nominal")])
        try testbed.set("thermal_zone3", attributes: ["temp": "n/a"], uevent: "change")
        #expect(probe.notes(1) == [Note("thermal/state", "nominal", previous: "critical")])
        #expect(probe.logged.contains { $0.contains(#"skipped thermal zone thermal_zone3: temp is not a number: "n/a""#) }, "\(probe.logged)")
        try testbed.setTemperature("thermal_zone3", 100_000)
        #expect(probe.notes(1) == [Note("thermal/state", "critical", previous: "nominal")])
        try testbed.remove("thermal_zone3")
        #expect(probe.notes(1) == [Note("thermal/state", "nominal", previous: "critical")])
        // A zone without a readable temp (a wireless card's while it is down) is usual: it does
        // not count, and it is no warning.
        try testbed.add("thermal_zone4", subsystem: "thermal", attributes: ["type": "iwlwifi_1"], properties: [:])
        #expect(probe.notesUntilSynced().isEmpty)
        #expect(probe.logged.count == 1, "\(probe.logged)")
        #expect(probe.quit() == 0)
    }

    /// A temperature that changes without a uevent is read on the 10 s re-read, and not sooner
    /// (the change comes a moment after the start, when the period began).
    @Test func silentChangesAreReadWithinTenSeconds() throws {
        let testbed = try Testbed()
        try testbed.addZone("thermal_zone0", temperature: 40_000, trips: [("passive", 90_000)])
        let probe = try probe(testbed, rereadInterval: 10)
        #expect(started(probe) == [Note("thermal/state", "nominal")])
        try testbed.setTemperature("thermal_zone0", 95_000, announced: false)
        let changed = ContinuousClock.now
        let read = probe.read(until: { Note($0) != nil }, timeout: .seconds(12))
        #expect(read.compactMap(Note.init) == [Note("thermal/state", "serious", previous: "nominal")])
        let waited = ContinuousClock.now - changed
        #expect(waited > .seconds(5) && waited < .milliseconds(10_500), "\(waited)")
        #expect(probe.quit() == 0)
    }

    /// `PerformanceDegraded` from the new name while it is there, else the old one; not counted
    /// once neither is; the worst of it and the zones.
    @Test func performanceDegradedFromEitherNameAndTheZones() async throws {
        let old = try await startDaemon(old: "high-operating-temperature")
        let testbed = try Testbed()
        try testbed.addZone("thermal_zone0", temperature: 40_000, trips: [("passive", 90_000), ("critical", 105_000)])
        let probe = try probe(testbed)
        // The daemon's answer is in the first value.
        #expect(started(probe) == [Note("thermal/state", "serious")])
        #expect(members(probe.storeWhenFirst("running")) == ["thermal/state": "serious"])

        try setDegraded(oldName, "lap-detected")
        #expect(probe.notes(1) == [Note("thermal/state", "nominal", previous: "serious")])
        try setDegraded(oldName, "lap-detected,high-operating-temperature")
        #expect(probe.notes(1) == [Note("thermal/state", "serious", previous: "nominal")])

        // The new name comes: it is the one that counts.
        let new = try await startDaemon(new: "")
        #expect(probe.notes(1) == [Note("thermal/state", "nominal", previous: "serious")])
        try setDegraded(newName, "high-operating-temperature")
        #expect(probe.notes(1) == [Note("thermal/state", "serious", previous: "nominal")])
        // A zone past its critical trip is worse.
        try testbed.setTemperature("thermal_zone0", 110_000)
        #expect(probe.notes(1) == [Note("thermal/state", "critical", previous: "serious")])
        try testbed.setTemperature("thermal_zone0", 40_000)
        #expect(probe.notes(1) == [Note("thermal/state", "serious", previous: "critical")])
        // The new name leaves: the old one's value again (the same), then it changes.
        try setDegraded(newName, "")
        #expect(probe.notes(1) == [Note("thermal/state", "nominal", previous: "serious")])
        try await new.stop()
        #expect(probe.notes(1) == [Note("thermal/state", "serious", previous: "nominal")])
        // Neither is there: it no longer counts.
        try await old.stop()
        #expect(probe.notes(1) == [Note("thermal/state", "nominal", previous: "serious")])
        #expect(probe.quit() == 0)
    }
}
