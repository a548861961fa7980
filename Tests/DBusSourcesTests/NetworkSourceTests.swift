import DBus
import Logging
import TestSupport
import NotifyBus
import NotifyBusSources
import Testing

private let service = "org.freedesktop.NetworkManager"
private let manager = "/org/freedesktop/NetworkManager"

/// NetworkSource against python-dbusmock's `networkmanager` template on a private system bus.
/// The template has `Connectivity` (4, full) but no `Metered`: the tests add it.
@Suite("NetworkSource with python-dbusmock")
struct NetworkSourceTests {
    let bus: PrivateBus
    let client: DBusClient

    init() async throws {
        (bus, client) = try await PrivateBus.startedWithClient()
    }

    /// Starts the mock with `Metered` (when given) added to the manager object.
    func startMock(metered: UInt32? = 2) async throws -> MockService {
        let mock = try await MockService(bus: bus, template: "networkmanager", name: service)
        if let metered {
            try await mockCall(client, service, manager, "AddProperty", [.string(service), .string("Metered"), .variant(.uint32(metered))])
            // Signalled too: a source that read the properties before it was added sees it.
            try await update([("Metered", .uint32(metered))])
        }
        return mock
    }

    /// Changes manager properties in one `PropertiesChanged`.
    func update(_ properties: [(String, DBusValue)]) async throws {
        try await mockCall(client, service, manager, "UpdateProperties", [.string(service), .vardict(properties)])
    }

    func makeSource(_ notifications: NotificationBus = NotificationBus()) -> RunningSource<NetworkSource> {
        let log = LogRecorder()
        let source = NetworkSource(
            bus: notifications,
            configuration: .init(
                address: bus.dbusAddress,
                connection: .init(initialBackoff: .milliseconds(50), maximumBackoff: .milliseconds(200), defaultTimeout: .seconds(5))),
            logger: log.logger)
        return RunningSource(source, bus: notifications, log: log)
    }

    @Test func initialValuesThenEveryStateMaps() async throws {
        let mock = try await startMock(metered: 2)
        let running = makeSource()
        #expect(await running.waitFor("network/connectivity", "full"))
        #expect(await running.waitFor("network/metered", false))
        #expect(running.source.status == .running)

        for (state, mapped) in [(1, "none"), (2, "portal"), (3, "limited"), (0, "unknown"), (4, "full"), (7, "unknown")] as [(UInt32, JSONValue)] {
            try await mockCall(client, service, "/org/freedesktop", "SetConnectivity", [.uint32(state)])
            #expect(await running.waitFor("network/connectivity", mapped), "Connectivity \(state)")
        }
        for (state, mapped) in [(1, true), (2, false), (3, true), (0, nil), (4, false), (9, nil)] as [(UInt32, JSONValue)] {
            try await update([("Metered", .uint32(state))])
            #expect(await running.waitFor("network/metered", mapped), "Metered \(state)")
        }
        #expect(running.values("network/connectivity") == ["full", "none", "portal", "limited", "unknown", "full", "unknown"])
        #expect(running.values("network/metered") == [false, true, false, true, nil, false, nil])
        // Both in one signal; a re-read finds nothing new.
        try await update([("Connectivity", .uint32(3)), ("Metered", .uint32(4))])
        #expect(await running.waitFor("network/connectivity", "limited"))
        #expect(await running.waitFor("network/metered", false))
        await running.source.reread()
        #expect(running.values("network/metered").count == 8)
        try await running.stop()
        _ = mock
    }

    @Test func aMissingMeteredIsUnknown() async throws {
        let mock = try await startMock(metered: nil)
        let running = makeSource()
        #expect(await running.waitFor("network/connectivity", "full"))
        #expect(await running.waitFor("network/metered", nil))
        #expect(running.problems.recent.isEmpty)
        try await running.stop()
        _ = mock
    }

    @Test func changesWhileSuspendedGiveOneNotificationPerKeyWithTheirCounts() async throws {
        let mock = try await startMock(metered: 2)
        let notifications = NotificationBus()
        let running = makeSource(notifications)
        #expect(await running.waitFor("network/metered", false))
        #expect(await running.waitFor("network/connectivity", "full"))
        let held = Recorder<SubscriptionEvent>()
        let subscriber = notifications.subscribe(["network/**"]) { held.append($0) }
        subscriber.suspend()
        for (connectivity, metered) in [(1, 1), (2, 1), (4, 2)] as [(UInt32, UInt32)] {
            try await update([("Connectivity", .uint32(connectivity)), ("Metered", .uint32(metered))])
            #expect(await running.waitFor("network/connectivity", .string(NetworkSource.connectivity(connectivity))))
        }
        #expect(await running.waitFor("network/metered", false))
        subscriber.resume()
        let flushed = held.all.compactMap(\.notification)
        #expect(flushed.count == 2)
        #expect(flushed.first { $0.key == "network/connectivity" }?.value == "full")
        #expect(flushed.first { $0.key == "network/connectivity" }?.coalesced == 3)
        #expect(flushed.first { $0.key == "network/metered" }?.value == false)
        #expect(flushed.first { $0.key == "network/metered" }?.coalesced == 2)
        try await running.stop()
        _ = mock
    }

    @Test func absentIsUnavailableThenFollowedWhenItComesAndGoes() async throws {
        let running = makeSource()
        #expect(await eventually(timeout: .seconds(30)) {
            running.source.status == .unavailable(reason: "NetworkManager (org.freedesktop.NetworkManager) is not running")
        })
        #expect(running.bus.value(forKey: "network/connectivity") == nil)
        let mock = try await startMock(metered: 1)
        #expect(await running.waitFor("network/connectivity", "full"))
        #expect(await running.waitFor("network/metered", true))
        #expect(await running.waitForStatus("running"))
        try await mock.stop()
        #expect(await running.waitForStatus("unavailable"))
        // The keys keep their last values.
        #expect(running.bus.value(forKey: "network/metered") == true)
        let again = try await startMock(metered: 2)
        #expect(await running.waitFor("network/metered", false))
        #expect(await running.waitForStatus("running"))
        try await running.stop()
        _ = again
    }

    @Test func valuesOfTheWrongTypeAreSkippedAndReported() async throws {
        let mock = try await startMock(metered: 2)
        let running = makeSource()
        #expect(await running.waitFor("network/metered", false))
        try await update([("Metered", .string("yes")), ("Connectivity", .int32(2))])
        #expect(await eventually(timeout: .seconds(30)) { running.problems.recent.filter { $0.contains("expected 'u'") }.count == 2 })
        #expect(running.problems.all.contains {
            $0.message.contains("Metered") && $0.metadata["key"] == "network/metered" && $0.metadata["source"] == "network"
        })
        try await update([("Metered", .uint32(1))])
        #expect(await running.waitFor("network/metered", true))
        #expect(running.values("network/connectivity") == ["full"])
        #expect(running.source.status == .running)
        try await running.stop()
        _ = mock
    }
}

@Suite("NetworkManager states → values")
struct NetworkMappingTests {
    @Test func connectivityAndMeteredMapAsTheContractSays() {
        #expect((0...5).map { NetworkSource.connectivity(UInt32($0)) } == ["unknown", "none", "portal", "limited", "full", "unknown"])
        #expect(NetworkSource.connectivity(.max) == "unknown")
        #expect((0...5).map { NetworkSource.metered(UInt32($0)) } == [nil, true, false, true, false, nil])
    }
}
