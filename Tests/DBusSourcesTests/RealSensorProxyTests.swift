import DBus
import TestSupport
import NotifyBus
import NotifyBusSources
import Testing

@Suite("SensorProxySource with the real iio-sensor-proxy under umockdev", .serialized)
struct RealSensorProxyTests {
    @Test func realDaemonOrientationProximityLightSuspendAndRestart() async throws {
        let bus = try PrivateBus()
        let testbed = try IIOTestbed(bus: bus)
        try testbed.add("accel")
        try testbed.add("proximity")
        try testbed.add("als")
        try testbed.start()
        try await bus.waitForOwner(of: "net.hadess.SensorProxy")

        let notifications = NotificationBus()
        let log = LogRecorder()
        let running = RunningSource(
            SensorProxySource(
                bus: notifications,
                configuration: .init(address: bus.dbusAddress, connection: .init(initialBackoff: .milliseconds(50), maximumBackoff: .milliseconds(500))),
                logger: log.logger),
            bus: notifications, log: log)
        #expect(await running.waitFor("orientation", "portrait"))
        #expect(await running.waitFor("proximity", true))
        #expect(await running.waitFor("light", ["level": 10.0, "unit": "lux"]))
        #expect(running.source.status == .running)
        // The defaults the daemon reports before its first poll were never published.
        #expect(running.values("orientation") == ["portrait"])
        #expect(running.values("proximity") == [true])

        try testbed.orient("left-up")
        #expect(await running.waitFor("orientation", "landscape-left"))
        try testbed.set("proximity", ["in_proximity_raw": "0"])
        #expect(await running.waitFor("proximity", false))
        try testbed.set("als", ["in_illuminance_input": "250"])
        #expect(await running.waitFor("light", ["level": 250.0, "unit": "lux"]))

        // Orientation changes while a subscriber is suspended: one notification on resume.
        let suspended = Recorder<SubscriptionEvent>()
        let subscriber = notifications.subscribe(["orientation"]) { suspended.append($0) }
        subscriber.suspend()
        for (raw, mapped) in [("bottom-up", "portrait-upside-down"), ("right-up", "landscape-right")] {
            try testbed.orient(raw)
            #expect(await running.waitFor("orientation", .string(mapped)))
        }
        subscriber.resume()
        let flushed = suspended.all.compactMap(\.notification)
        #expect(flushed.count == 1)
        #expect(flushed.first?.value == "landscape-right")
        #expect(flushed.first?.coalesced == 2)

        // The daemon stops and starts again: unavailable, then running; the unchanged
        // orientation is not published again, new values flow.
        let orientationsBefore = running.values("orientation").count
        try testbed.stop()
        #expect(await running.waitForStatus("unavailable"))
        try testbed.start()
        #expect(await running.waitForStatus("running"))
        try await Task.sleep(for: .seconds(2))  // past the claim, first poll and settle re-read
        #expect(running.values("orientation").count == orientationsBefore)
        try testbed.orient("normal")
        #expect(await running.waitFor("orientation", "portrait"))
        try testbed.set("proximity", ["in_proximity_raw": "256"])
        #expect(await running.waitFor("proximity", true))
        #expect(running.problems.recent.isEmpty)
        try await running.stop()
        try testbed.stop()
    }
}
