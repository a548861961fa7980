import DBus
import TestSupport
import NotifyBus
import NotifyBusSources
import Testing

private let service = "net.hadess.SensorProxy"
private let path = "/net/hadess/SensorProxy"

private let allSensors = #"{"has_accelerometer": true, "accelerometer_orientation": "normal", "has_proximity": true, "proximity_near": false, "has_ambient_light": true, "light_level": 42.0}"#

/// The sensor source against python-dbusmock's `iio-sensors-proxy` template, which (like
/// iio-sensor-proxy ≥ 3.1) sends readings only to claimers, as unicast signals.
@Suite("SensorProxySource with python-dbusmock")
struct SensorProxySourceTests {
    let bus: PrivateBus
    let client: DBusClient

    init() async throws {
        (bus, client) = try await PrivateBus.startedWithClient()
    }

    func startMock(_ parameters: String = allSensors) async throws -> MockService {
        try await MockService(bus: bus, template: "iio-sensors-proxy", name: service, parameters: parameters)
    }

    func makeSource(_ notifications: NotificationBus = NotificationBus()) -> RunningSource<SensorProxySource> {
        let log = LogRecorder()
        let source = SensorProxySource(
            bus: notifications,
            configuration: .init(
                address: bus.dbusAddress, settleDelay: .milliseconds(200),
                connection: .init(initialBackoff: .milliseconds(50), maximumBackoff: .milliseconds(200), defaultTimeout: .seconds(5))),
            logger: log.logger)
        return RunningSource(source, bus: notifications, log: log)
    }

    func set(_ property: String, _ value: DBusValue) async throws {
        try await mockCall(client, service, path, "SetInternalProperty", [.string(service), .string(property), .variant(value)])
    }

    func owners(_ property: String) async throws -> [String] {
        try await mockCall(client, service, path, "GetInternalProperty", [.string(property)]).first?.stringArray ?? []
    }

    @Test func aServiceAbsentAtStartIsUnavailableAtOnceAndRunningWhenItComes() async throws {
        let running = makeSource()
        // No owner at start is an answer too: unavailable, not stuck connecting.
        #expect(await eventually { running.source.status == .unavailable(reason: "iio-sensor-proxy (net.hadess.SensorProxy) is not running") })
        let mock = try await startMock()
        #expect(await running.waitForStatus("running"))
        #expect(await running.waitFor("orientation", "portrait"))
        try await running.stop()
        _ = mock
    }

    @Test func publishesEverySensorAndFollowsUnicastReadings() async throws {
        let mock = try await startMock()
        let running = makeSource()
        #expect(await running.waitFor("orientation", "portrait"))
        #expect(await running.waitFor("proximity", false))
        #expect(await running.waitFor("light", ["level": 42.0, "unit": "lux"]))
        #expect(running.source.status == .running)
        #expect(try await owners("AccelerometerOwners").count == 1)
        #expect(try await owners("ProximityOwners").count == 1)
        #expect(try await owners("AmbientLightOwners").count == 1)

        for (raw, mapped) in [("left-up", "landscape-left"), ("right-up", "landscape-right"), ("bottom-up", "portrait-upside-down"), ("undefined", "unknown"), ("normal", "portrait")] {
            try await set("AccelerometerOrientation", .string(raw))
            #expect(await running.waitFor("orientation", .string(mapped)), "\(raw)")
        }
        try await set("ProximityNear", .boolean(true))
        #expect(await running.waitFor("proximity", true))
        try await set("LightLevel", .double(310.5))
        #expect(await running.waitFor("light", ["level": 310.5, "unit": "lux"]))
        // Each value once: nothing repeated, no defaults published before the claim.
        #expect(running.values("orientation") == ["portrait", "landscape-left", "landscape-right", "portrait-upside-down", "unknown", "portrait"])
        #expect(running.values("proximity") == [false, true])
        #expect(running.problems.recent.isEmpty)

        try await running.stop()
        // Claims are released on stop.
        #expect(try await owners("AccelerometerOwners").isEmpty)
        #expect(try await owners("ProximityOwners").isEmpty)
        #expect(try await owners("AmbientLightOwners").isEmpty)
        _ = mock
    }

    @Test func claimsOnlySensorsThatExistAndFollowsReplugging() async throws {
        let mock = try await startMock(#"{"has_accelerometer": true, "accelerometer_orientation": "left-up"}"#)
        let running = makeSource()
        #expect(await running.waitFor("orientation", "landscape-left"))
        #expect(try await owners("ProximityOwners").isEmpty)
        #expect(try await owners("AmbientLightOwners").isEmpty)
        #expect(running.notifications.allSatisfy { $0.key == "orientation" })

        // A proximity sensor is plugged in (Has* is broadcast): claimed, then its readings flow.
        try await set("HasProximity", .boolean(true))
        #expect(await eventually { (try? await owners("ProximityOwners").count) == 1 })
        try await set("ProximityNear", .boolean(true))
        #expect(await running.waitFor("proximity", true))
        // Unplugged: the key becomes null; plugged again: claimed again.
        try await set("HasProximity", .boolean(false))
        #expect(await running.waitFor("proximity", nil))
        try await set("HasProximity", .boolean(true))
        try await set("ProximityNear", .boolean(false))
        #expect(await running.waitFor("proximity", false))
        try await running.stop()
        _ = mock
    }

    @Test func serviceStopsAndRestartsStatusReclaimAndValuesFlow() async throws {
        let mock = try await startMock()
        let running = makeSource()
        #expect(await running.waitFor("orientation", "portrait"))
        #expect(await running.waitForStatus("running"))

        try await mock.stop()
        #expect(await running.waitForStatus("unavailable"))
        #expect(running.source.status.reason?.contains("not running") == true)

        // Back with the same orientation and a different proximity: only the difference is published.
        let countBefore = running.values("orientation").count
        let second = try await startMock(#"{"has_accelerometer": true, "accelerometer_orientation": "normal", "has_proximity": true, "proximity_near": true, "has_ambient_light": true, "light_level": 42.0}"#)
        #expect(await running.waitForStatus("running"))
        #expect(await running.waitFor("proximity", true))
        #expect(try await owners("AccelerometerOwners").count == 1)
        try await set("AccelerometerOrientation", .string("right-up"))
        #expect(await running.waitFor("orientation", "landscape-right"))
        #expect(running.values("orientation").count == countBefore + 1)
        #expect(running.values("light").count == 1)
        #expect(running.statuses.all.map(\.name).contains("unavailable"))
        try await running.stop()
        _ = second
    }

    @Test func busDaemonGoesAwayAndComesBack() async throws {
        let mock = try await startMock()
        let running = makeSource()
        #expect(await running.waitFor("orientation", "portrait"))
        bus.stop()
        // (The daemon may first announce that the service's name went away, then drop us.)
        #expect(await eventually { running.source.status.reason?.contains("unreachable") == true })
        #expect(running.source.status.name == "unavailable")
        mock.process.terminate()

        try bus.start()
        let newClient = try DBusClient(address: bus.dbusAddress)
        try await newClient.waitUntilConnected()
        let second = try await MockService(
            bus: bus, template: "iio-sensors-proxy", name: service,
            parameters: #"{"has_accelerometer": true, "accelerometer_orientation": "bottom-up"}"#)
        #expect(await running.waitForStatus("running"))
        #expect(await running.waitFor("orientation", "portrait-upside-down"))
        try await running.stop()
        await newClient.close()
        _ = second
    }

    @Test func wrongTypesAndUnexpectedSignalsAreReportedAndSkipped() async throws {
        let mock = try await startMock()
        let running = makeSource()
        #expect(await running.waitFor("light", ["level": 42.0, "unit": "lux"]))
        #expect(await running.waitFor("orientation", "portrait"))
        // Every sensor settled (its re-read done): a re-read cannot undo the signals below.
        #expect(await running.waitForStatus("running"))
        let source = running.source

        // One signal: a wrong-typed orientation, and a proximity reading that must still flow.
        try await mockCall(client, service, path, "EmitSignal", [
            .string("org.freedesktop.DBus.Properties"), .string("PropertiesChanged"), .string("sa{sv}as"),
            propertiesChangedArguments(service, [("AccelerometerOrientation", .int32(3)), ("ProximityNear", .boolean(true))]),
        ])
        #expect(await running.waitFor("proximity", true))
        #expect(await eventually { running.problems.recent.contains { $0.contains("AccelerometerOrientation has type 'i'") } })
        // An orientation we do not know, a light level that is a string, a malformed signal.
        try await mockCall(client, service, path, "EmitSignal", [
            .string("org.freedesktop.DBus.Properties"), .string("PropertiesChanged"), .string("sa{sv}as"),
            propertiesChangedArguments(service, [("AccelerometerOrientation", .string("sideways")), ("LightLevel", .string("bright"))]),
        ])
        try await mockCall(client, service, path, "EmitSignal", [
            .string("org.freedesktop.DBus.Properties"), .string("PropertiesChanged"), .string("s"),
            .array(elementSignature: "v", [.variant(.string(service))]),
        ])
        #expect(await eventually {
            let problems = running.problems.recent
            return problems.contains { $0.contains("'sideways'") }
                && problems.contains { $0.contains("LightLevel has type 's'") }
                && problems.contains { $0.contains("unexpected signal") }
        })
        // Other values still flow, and nothing wrong was published.
        try await set("AccelerometerOrientation", .string("left-up"))
        #expect(await running.waitFor("orientation", "landscape-left"))
        #expect(running.values("orientation") == ["portrait", "landscape-left"])
        #expect(running.values("light") == [["level": 42.0, "unit": "lux"]])
        #expect(source.status == .running)
        try await running.stop()
        _ = mock
    }

    @Test func broadcastReadingsFromTheOwnerAreAcceptedOthersAreNot() async throws {
        let mock = try await startMock()
        let running = makeSource()
        #expect(await running.waitFor("orientation", "portrait"))
        // Every sensor settled (its re-read done): a re-read cannot undo the signals below.
        #expect(await running.waitForStatus("running"))
        // iio-sensor-proxy 3.0 broadcasts readings (no destination).
        try await mockCall(client, service, path, "EmitSignal", [
            .string("org.freedesktop.DBus.Properties"), .string("PropertiesChanged"), .string("sa{sv}as"),
            propertiesChangedArguments(service, [("AccelerometerOrientation", .string("right-up"))]),
        ])
        #expect(await running.waitFor("orientation", "landscape-right"))
        // The same signal from someone who is not the service's owner is ignored.
        try await client.emitSignal(
            path: ObjectPath(validating: path), interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            arguments: [.string(service), .vardict([("AccelerometerOrientation", .string("left-up"))]), .strings([])])
        try await set("ProximityNear", .boolean(true))
        #expect(await running.waitFor("proximity", true))
        #expect(running.values("orientation") == ["portrait", "landscape-right"])
        try await running.stop()
        _ = mock
    }

    @Test func orientationChangesWhileSuspendedGiveOneNotificationOnResume() async throws {
        let mock = try await startMock()
        let notifications = NotificationBus()
        let running = makeSource(notifications)
        #expect(await running.waitFor("orientation", "portrait"))
        #expect(await running.waitFor("light", ["level": 42.0, "unit": "lux"]))

        let suspended = Recorder<SubscriptionEvent>()
        let subscriber = notifications.subscribe(["orientation"]) { suspended.append($0) }
        subscriber.suspend()
        for raw in ["left-up", "bottom-up", "right-up"] {
            try await set("AccelerometerOrientation", .string(raw))
            #expect(await running.waitFor("orientation", .string(SensorProxySource.orientation(for: raw)!)))
        }
        subscriber.resume()
        let received = suspended.all.compactMap(\.notification)
        #expect(received.count == 1)
        #expect(received.first?.value == "landscape-right")
        #expect(received.first?.coalesced == 3)
        #expect(received.first?.previous == nil)
        try await running.stop()
        _ = mock
    }
}
