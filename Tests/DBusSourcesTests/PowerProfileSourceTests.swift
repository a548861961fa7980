import DBus
import Logging
import TestSupport
import NotifyBus
import NotifyBusSources
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The new name, object and interface of power-profiles-daemon.
private let newName = ("org.freedesktop.UPower.PowerProfiles", "/org/freedesktop/UPower/PowerProfiles")
/// The old name (power-profiles-daemon ≤ 0.12), object and interface.
private let oldName = ("net.hadess.PowerProfiles", "/net/hadess/PowerProfiles")

/// Sets `ActiveProfile` of the service `name` at `path` with `Properties.Set` (the mocks and the
/// real daemon send `PropertiesChanged`).
func setActiveProfile(_ client: DBusClient, _ name: (String, String), _ value: DBusValue) async throws {
    _ = try await client.call(
        destination: BusName(validating: name.0), path: ObjectPath(validating: name.1), interface: "org.freedesktop.DBus.Properties",
        member: "Set", arguments: [.string(name.0), .string("ActiveProfile"), .variant(value)])
}

/// PowerProfileSource against python-dbusmock's `power_profiles_daemon` template (the old name)
/// and a template of the same shape under the new name (Fixtures/upower_power_profiles_daemon.py,
/// as Debian's python-dbusmock 0.28 has no `upower_power_profiles_daemon`).
@Suite("PowerProfileSource with python-dbusmock")
struct PowerProfileSourceTests {
    let bus: PrivateBus
    let client: DBusClient

    init() async throws {
        (bus, client) = try await PrivateBus.startedWithClient()
    }

    func startOld(_ profile: String = "balanced") async throws -> MockService {
        try await MockService(bus: bus, template: "power_profiles_daemon", name: oldName.0, parameters: #"{"ActiveProfile": "\#(profile)"}"#)
    }

    func startNew(_ profile: String = "balanced") async throws -> MockService {
        try await MockService(
            bus: bus, template: fixture("upower_power_profiles_daemon.py"), name: newName.0,
            parameters: #"{"ActiveProfile": "\#(profile)"}"#)
    }

    func makeSource(_ notifications: NotificationBus = NotificationBus()) -> RunningSource<PowerProfileSource> {
        let log = LogRecorder()
        let source = PowerProfileSource(
            bus: notifications,
            configuration: .init(
                address: bus.dbusAddress,
                connection: .init(initialBackoff: .milliseconds(50), maximumBackoff: .milliseconds(200), defaultTimeout: .seconds(5))),
            logger: log.logger)
        return RunningSource(source, bus: notifications, log: log)
    }

    /// A string property as the JSON the source publishes.
    static func json(_ value: DBusValue?) -> JSONValue {
        value?.stringValue.map(JSONValue.string) ?? .null
    }

    @Test func oldNameAloneGivesTheProfileAndItsChanges() async throws {
        let old = try await startOld("performance")
        let running = makeSource()
        #expect(await running.waitFor("power/profile", "performance"))
        #expect(await running.waitForStatus("running"))
        try await setActiveProfile(client, oldName, .string("power-saver"))
        #expect(await running.waitFor("power/profile", "power-saver"))
        // A re-read of the same value publishes nothing.
        await running.source.reread()
        #expect(running.values("power/profile") == ["performance", "power-saver"])
        try await running.stop()
        _ = old
    }

    @Test func newNameIsPreferredAndTheOldOneIsTheFallback() async throws {
        let old = try await startOld("performance")
        let new = try await startNew("power-saver")
        let running = makeSource()
        #expect(await running.waitFor("power/profile", "power-saver"))
        // The old name's changes do not count while the new one is served.
        try await setActiveProfile(client, oldName, .string("balanced"))
        try await setActiveProfile(client, newName, .string("performance"))
        #expect(await running.waitFor("power/profile", "performance"))
        #expect(!running.values("power/profile").contains("balanced"))
        // The new name leaves: the old one's value.
        try await new.stop()
        #expect(await running.waitFor("power/profile", "balanced"))
        #expect(running.source.status == .running)
        try await setActiveProfile(client, oldName, .string("power-saver"))
        #expect(await running.waitFor("power/profile", "power-saver"))
        // The new name comes back: its value again.
        let again = try await startNew("performance")
        #expect(await running.waitFor("power/profile", "performance"))
        // Both leave: unavailable, the value stays.
        try await again.stop()
        #expect(await running.waitFor("power/profile", "power-saver"))
        try await old.stop()
        #expect(await running.waitForStatus("unavailable"))
        #expect(running.bus.value(forKey: "power/profile") == "power-saver")
        #expect(running.values("power/profile") == ["power-saver", "performance", "balanced", "power-saver", "performance", "power-saver"])
        try await running.stop()
    }

    @Test func absentAtStartIsUnavailableThenRunningWhenEitherComes() async throws {
        let running = makeSource()
        #expect(await eventually(timeout: .seconds(30)) {
            running.source.status == .unavailable(
                reason: "power-profiles-daemon (org.freedesktop.UPower.PowerProfiles, net.hadess.PowerProfiles) is not running")
        })
        #expect(running.bus.value(forKey: "power/profile") == nil)
        let old = try await startOld("power-saver")
        #expect(await running.waitFor("power/profile", "power-saver"))
        #expect(await running.waitForStatus("running"))
        try await old.stop()
        #expect(await running.waitForStatus("unavailable"))
        let new = try await startNew("balanced")
        #expect(await running.waitFor("power/profile", "balanced"))
        #expect(await running.waitForStatus("running"))
        try await running.stop()
        _ = new
    }

    @Test func changesWhileSuspendedGiveOneNotificationWithTheirCount() async throws {
        let new = try await startNew("balanced")
        let notifications = NotificationBus()
        let running = makeSource(notifications)
        #expect(await running.waitFor("power/profile", "balanced"))
        let held = Recorder<SubscriptionEvent>()
        let subscriber = notifications.subscribe(["power/profile"]) { held.append($0) }
        subscriber.suspend()
        for profile in ["power-saver", "performance", "power-saver"] {
            try await setActiveProfile(client, newName, .string(profile))
            #expect(await running.waitFor("power/profile", .string(profile)))
        }
        subscriber.resume()
        let flushed = held.all.compactMap(\.notification)
        #expect(flushed.count == 1)
        #expect(flushed.first?.value == "power-saver")
        #expect(flushed.first?.coalesced == 3)
        try await running.stop()
        _ = new
    }

    @Test func aProfileOfTheWrongTypeOrNameIsSkippedAndReported() async throws {
        let old = try await startOld("balanced")
        let running = makeSource()
        #expect(await running.waitFor("power/profile", "balanced"))
        try await setActiveProfile(client, oldName, .uint32(2))
        #expect(await eventually(timeout: .seconds(30)) { running.problems.recent.contains { $0.contains("expected 's'") } })
        #expect(running.problems.all.contains {
            $0.message.contains("expected 's'") && $0.metadata["key"] == "power/profile" && $0.metadata["source"] == "power-profile"
        })
        // A string that names no profile of the three is skipped too.
        try await setActiveProfile(client, oldName, .string("turbo"))
        #expect(await eventually(timeout: .seconds(30)) { running.problems.recent.contains { $0.contains("'turbo', not one of") } })
        try await setActiveProfile(client, oldName, .string("performance"))
        #expect(await running.waitFor("power/profile", "performance"))
        #expect(running.values("power/profile") == ["balanced", "performance"])
        #expect(running.source.status == .running)
        try await running.stop()
        _ = old
    }
}

/// PowerProfileSource against the real power-profiles-daemon (Debian 12's 0.12: the old name
/// only), on a private system bus with python-dbusmock's `polkitd` allowing profile switches. It
/// runs with its fake driver (three profiles) in a private mount namespace whose `/var/lib` is a
/// temporary directory, so the state it saves never reaches the machine.
@Suite("PowerProfileSource with the real power-profiles-daemon", .enabled(if: RealPowerProfilesDaemon.isAvailable))
struct RealPowerProfilesDaemonTests {
    @Test func followsTheRealDaemonAcrossARestart() async throws {
        let bus = try PrivateBus()
        let client = try DBusClient(address: bus.dbusAddress)
        try await client.waitUntilConnected()
        let polkit = try await MockService(bus: bus, template: "polkitd", name: "org.freedesktop.PolicyKit1")
        try await mockCall(
            client, "org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority", "SetAllowed",
            [.strings(["net.hadess.PowerProfiles.switch-profile"])])
        let daemon = try RealPowerProfilesDaemon(bus: bus)
        try await daemon.start()

        let notifications = NotificationBus()
        let log = LogRecorder()
        let running = RunningSource(
            PowerProfileSource(
                bus: notifications,
                configuration: .init(
                    address: bus.dbusAddress,
                    connection: .init(initialBackoff: .milliseconds(50), maximumBackoff: .milliseconds(200), defaultTimeout: .seconds(5))),
                logger: log.logger),
            bus: notifications, log: log)
        #expect(await running.waitFor("power/profile", "balanced"))
        #expect(await running.waitForStatus("running"))
        try await setActiveProfile(client, oldName, .string("power-saver"))
        #expect(await running.waitFor("power/profile", "power-saver"))
        try await setActiveProfile(client, oldName, .string("performance"))
        #expect(await running.waitFor("power/profile", "performance"))

        // It stops: unavailable, the value stays; it starts again (with the profile it saved
        // or its default): what it serves is published, and its changes are followed.
        daemon.stop()
        #expect(await running.waitForStatus("unavailable"))
        #expect(running.bus.value(forKey: "power/profile") == "performance")
        try await daemon.start()
        #expect(await running.waitForStatus("running"))
        let served = try await client.call(
            destination: "net.hadess.PowerProfiles", path: "/net/hadess/PowerProfiles", interface: "org.freedesktop.DBus.Properties",
            member: "Get", arguments: [.string("net.hadess.PowerProfiles"), .string("ActiveProfile")]).first?.unwrapped
        #expect(await running.waitFor("power/profile", PowerProfileSourceTests.json(served)))
        let next: JSONValue = served == .string("power-saver") ? "balanced" : "power-saver"
        try await setActiveProfile(client, oldName, .string(next.stringValue ?? ""))
        #expect(await running.waitFor("power/profile", next))
        #expect(Array(running.values("power/profile").prefix(3)) == ["balanced", "power-saver", "performance"])
        #expect(running.problems.recent.isEmpty)
        try await running.stop()
        daemon.stop()
        _ = polkit
    }
}
