import DBus
import EpollLoop
import Logging
@testable import NotifyBusLifecycle
import Synchronization
import SystemSupport
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `SystemdUnits` on a loop of its own with its own connection to a private session bus, made
/// before the connection connects (its first call asks the bus daemon for the manager's owner).
final class RunningSystemdUnits: Sendable {
    let log = LogRecorder()
    private let running: ConnectedOnLoop<SystemdUnits>

    init(bus: PrivateBus) async throws {
        let logger = log.logger
        running = try await ConnectedOnLoop(name: "systemd-units", bus: bus) { connection in
            SystemdUnits(connection: connection, logger: logger)
        }
    }

    func lookUp(_ unit: String) async throws -> SystemdUnits.Lookup {
        try await running.await { units, done in units.lookUp(unit: unit, reply: done) }
    }

    func freeze(_ unit: String) async throws -> Result<Void, DBusError> {
        try await running.await { units, done in units.freeze(unit: unit, completion: done) }
    }

    func thaw(_ unit: String) async throws -> Result<Void, DBusError> {
        try await running.await { units, done in units.thaw(unit: unit, completion: done) }
    }

    func stop() async { await running.stop() }
}

/// Whether `result` is a success.
func succeeded(_ result: Result<Void, DBusError>) -> Bool {
    if case .success = result { return true }
    return false
}

extension String {
    fileprivate var trimmingNewlines: String {
        var text = self
        while text.hasSuffix("\n") { text.removeLast() }
        return text
    }
}

/// SystemdUnits where a real manager cannot be: no manager on the bus, then one that comes later
/// and leaves (a python-dbusmock stand-in, `Fixtures/systemd_user_manager.py`, on a private
/// session bus: a real user manager's bus is its own), and answers read strictly.
@Suite("SystemdUnits with a systemd user manager stand-in", .serialized)
struct SystemdUnitsTests {
    let bus: PrivateBus
    let client: DBusClient

    init() async throws {
        (bus, client) = try await PrivateBus.startedWithClient(.session)
    }

    func startManager(units: [String: String] = [:]) async throws -> MockService {
        let entries = units.sorted { $0.key < $1.key }.map { #""\#($0.key)": "\#($0.value)""# }.joined(separator: ", ")
        return try await MockService(
            bus: bus, template: Paths.fixtures + "/systemd_user_manager.py", name: "org.freedesktop.systemd1",
            parameters: #"{"units": {\#(entries)}}"#)
    }

    /// The manager's call log: each call's method and first argument (a string).
    func calls() async throws -> [(method: String, unit: String?)] {
        let values = try await client.call(
            destination: "org.freedesktop.systemd1", path: "/org/freedesktop/systemd1", interface: "org.freedesktop.DBus.Mock",
            member: "GetCalls")
        return (values.first?.arrayElements ?? []).compactMap { call in
            guard case .structure(let fields) = call, fields.count == 3, let method = fields[1].stringValue else { return nil }
            return (method, fields[2].arrayElements?.first?.stringValue)
        }
    }

    @Test func withoutAManagerEveryUnitIsUnknownAndFreezingFails() async throws {
        let units = try await RunningSystemdUnits(bus: bus)
        #expect(try await units.lookUp("app-any.scope") == .unknown)
        let result = try await units.freeze("app-any.scope")
        guard case .failure(let error) = result else {
            Issue.record("FreezeUnit without a manager succeeded")
            return
        }
        #expect(error.name == DBusError.Name.nameHasNoOwner)
        // A manager that comes later is found; one that leaves is gone again.
        let manager = try await startManager(units: ["app-any.scope": "/nonexistent"])
        #expect(try await units.lookUp("app-any.scope") == .known("/org/freedesktop/systemd1/unit/app_2dany_2escope"))
        try await manager.stop()
        #expect(await eventually { (try? await units.lookUp("app-any.scope")) == .unknown })
        await units.stop()
    }

    @Test func getUnitAnswersAreReadStrictly() {
        #expect(SystemdUnits.lookup(from: .success([.objectPath("/org/freedesktop/systemd1/unit/a")])) == .known("/org/freedesktop/systemd1/unit/a"))
        if case .failed = SystemdUnits.lookup(from: .success([.string("/org/freedesktop/systemd1/unit/a")])) {} else {
            Issue.record("a string answer was taken")
        }
        if case .failed = SystemdUnits.lookup(from: .success([])) {} else { Issue.record("an empty answer was taken") }
        #expect(SystemdUnits.lookup(from: .failure(DBusError(name: SystemdUnits.noSuchUnit, message: ""))) == .unknown)
        #expect(SystemdUnits.lookup(from: .failure(DBusError(name: DBusError.Name.serviceUnknown, message: ""))) == .unknown)
        let timeout = DBusError(name: DBusError.Name.noReply, message: "")
        #expect(SystemdUnits.lookup(from: .failure(timeout)) == .failed(timeout))
    }
}

/// SystemdUnits against a real systemd user manager (`SystemdUserManager`) on its own session bus.
@Suite("SystemdUnits with a real systemd user manager", .serialized, .enabled(if: SystemdBedEnvironment.testsRun))
struct SystemdUnitsRealManagerTests {
    @Test func getUnitTellsKnownFromUnknownUnitsAndFreezingGoesToTheCgroup() async throws {
        let manager = try await SystemdBedEnvironment.manager()
        defer { manager.stop() }
        let app = try await manager.startInScope(appID: "org.example.A", command: ["/bin/sleep", "600"])
        let units = try await RunningSystemdUnits(bus: try manager.sessionBus())
        let object = try await manager.unitObject(app.unit)
        #expect(try await units.lookUp(app.unit) == .known(object))
        #expect(try await units.lookUp("app-test-org.example.Unknown-1.scope") == .unknown)
        // Units started later are known from then on.
        let later = try await manager.startInScope(appID: "org.example.B", command: ["/bin/sleep", "600"])
        if case .known = try await units.lookUp(later.unit) {} else { Issue.record("\(later.unit) is not known") }
        // FreezeUnit and ThawUnit reach the cgroup, and systemd's state follows.
        #expect(freezeBit(app.scope.directory) == "0")
        #expect(succeeded(try await units.freeze(app.unit)))
        #expect(freezeBit(app.scope.directory) == "1")
        #expect(app.scope.isFrozen)
        #expect(try await manager.freezerState(of: app.unit) == .frozen)
        #expect(succeeded(try await units.thaw(app.unit)))
        #expect(freezeBit(app.scope.directory) == "0")
        #expect(await eventually { !app.scope.isFrozen })
        #expect(try await manager.freezerState(of: app.unit) == .running)
        // A unit the manager does not know: its error, with its name and message.
        guard case .failure(let error) = try await units.freeze("app-test-org.example.Other-1.scope") else {
            Issue.record("FreezeUnit of an unknown unit succeeded")
            return
        }
        #expect(error.name == "org.freedesktop.systemd1.NoSuchUnit")
        #expect(error.message.contains("app-test-org.example.Other-1.scope"))
        await units.stop()
    }
}
