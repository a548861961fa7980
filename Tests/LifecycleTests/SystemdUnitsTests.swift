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
    let loop: EventLoopThread
    let log = LogRecorder()
    private let key = LoopLocalKey<(DBusConnection, SystemdUnits)>()

    init(bus: PrivateBus) async throws {
        loop = try EventLoopThread(name: "systemd-units")
        let (key, logger, address) = (key, log.logger, bus.dbusAddress)
        try await loop.submit { context in
            let connection = DBusConnection(address: address, context: context)
            context[local: key] = (connection, SystemdUnits(connection: connection, logger: logger))
            connection.connect()
        }
    }

    /// Runs `body` with the helper on its loop and awaits what it hands `done`.
    private func await<R: Sendable>(_ body: @escaping @Sendable (SystemdUnits, @escaping @Sendable (R) -> Void) -> Void) async throws -> R {
        let key = self.key
        return try await withCheckedThrowingContinuation { continuation in
            do {
                try loop.execute { context in
                    guard let (_, units) = context[local: key] else {
                        continuation.resume(throwing: HarnessError("stopped"))
                        return
                    }
                    body(units) { continuation.resume(returning: $0) }
                }
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    func lookUp(_ unit: String) async throws -> SystemdUnits.Lookup {
        try await self.await { units, done in units.lookUp(unit: unit, reply: done) }
    }

    func freeze(_ unit: String) async throws -> Result<Void, DBusError> {
        try await self.await { units, done in units.freeze(unit: unit, completion: done) }
    }

    func thaw(_ unit: String) async throws -> Result<Void, DBusError> {
        try await self.await { units, done in units.thaw(unit: unit, completion: done) }
    }

    func stop() async {
        let key = self.key
        _ = try? await loop.submit { context in
            if let (connection, units) = context[local: key] {
                units.stop()
                connection.close()
            }
            context[local: key] = nil
        }
        await loop.shutdown()
    }
}

private let nextGroupNumber = Atomic<Int>(1)

/// A cgroup made for one test under the first writable cgroup2 mount (as root), removed thawed
/// (`remove()`, also when it goes away).
final class ScratchCgroup {
    /// The first usable cgroup2 mount whose root directory is writable; `nil` when not root or none.
    static let mount: CgroupMount? = {
        guard geteuid() == 0 else { return nil }
        return CgroupMount.usableMounts().first { mount in
            mount.directory(ofGroup: mount.root).map { access($0, W_OK) == 0 } ?? false
        }
    }()

    /// Whether the tests that need one run: in CI always (and fail there without one), elsewhere
    /// only where they can.
    static var testsRun: Bool { getenv("CI") != nil || mount != nil }

    let directory: String
    private var removed = false

    init() throws {
        guard let mount = Self.mount, let root = mount.directory(ofGroup: mount.root) else {
            throw HarnessError("no writable cgroup2 mount (as root) in /proc/self/mountinfo")
        }
        let number = nextGroupNumber.wrappingAdd(1, ordering: .relaxed).oldValue
        directory = (root == "/" ? "" : root) + "/nb-units-\(getpid())-\(number)"
        guard mkdir(directory, 0o755) == 0 else { throw HarnessError("mkdir \(directory): errno \(errno)") }
    }

    deinit { remove() }

    /// What `cgroup.freeze` holds (`"1"`, `"0"`).
    var freezeFile: String? { readFile(directory + "/cgroup.freeze")?.trimmingNewlines }

    /// Whether `cgroup.events` says it is frozen.
    var isFrozen: Bool { readFile(directory + "/cgroup.events").flatMap(ControlGroup.frozen(inEventsFile:)) ?? false }

    /// Thaws and removes it.
    func remove() {
        guard !removed else { return }
        removed = true
        try? writeFile(directory + "/cgroup.freeze", "0")
        rmdir(directory)
    }
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

/// SystemdUnits against a systemd user manager stand-in of python-dbusmock
/// (`Fixtures/systemd_user_manager.py`) on a private session bus.
@Suite("SystemdUnits with a systemd user manager stand-in", .serialized)
struct SystemdUnitsTests {
    let bus: PrivateBus
    let client: DBusClient

    init() async throws {
        bus = try PrivateBus(.session)
        client = try DBusClient(address: bus.dbusAddress)
        try await client.waitUntilConnected()
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

    @Test func getUnitTellsKnownFromUnknownUnits() async throws {
        let manager = try await startManager(units: ["app-known.scope": "/nonexistent"])
        let units = try await RunningSystemdUnits(bus: bus)
        // The first call goes out before the manager's owner is known, the next ones to the owner.
        #expect(try await units.lookUp("app-known.scope") == .known("/org/freedesktop/systemd1/unit/app_2dknown_2escope"))
        #expect(try await units.lookUp("app-unknown.scope") == .unknown)
        #expect(try await units.lookUp("app-known.scope") == .known("/org/freedesktop/systemd1/unit/app_2dknown_2escope"))
        // Units added later are known from then on.
        _ = try await client.call(
            destination: "org.freedesktop.systemd1", path: "/org/freedesktop/systemd1", interface: "org.freedesktop.DBus.Mock",
            member: "AddUnit", arguments: [.string("app-later.scope"), .string("/nonexistent")])
        #expect(try await units.lookUp("app-later.scope") == .known("/org/freedesktop/systemd1/unit/app_2dlater_2escope"))
        let methods = try await calls().map(\.method)
        #expect(methods == ["GetUnit", "GetUnit", "GetUnit", "AddUnit", "GetUnit"])
        await units.stop()
        try await manager.stop()
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

    @Test(.enabled(if: ScratchCgroup.testsRun))
    func freezeAndThawGoThroughTheManagerToTheCgroup() async throws {
        let cgroup = try ScratchCgroup()
        defer { cgroup.remove() }
        let manager = try await startManager(units: ["app-frozen.scope": cgroup.directory])
        let units = try await RunningSystemdUnits(bus: bus)
        #expect(try await units.lookUp("app-frozen.scope") == .known("/org/freedesktop/systemd1/unit/app_2dfrozen_2escope"))
        #expect(cgroup.freezeFile == "0")
        #expect(succeeded(try await units.freeze("app-frozen.scope")))
        #expect(cgroup.freezeFile == "1")
        #expect(await eventually { cgroup.isFrozen })
        #expect(succeeded(try await units.thaw("app-frozen.scope")))
        #expect(cgroup.freezeFile == "0")
        #expect(await eventually { !cgroup.isFrozen })
        let recorded = try await calls()
        #expect(recorded.map(\.method) == ["GetUnit", "FreezeUnit", "ThawUnit"])
        #expect(recorded.map(\.unit) == ["app-frozen.scope", "app-frozen.scope", "app-frozen.scope"])
        // A unit the manager does not know: its error, with its name and message.
        guard case .failure(let error) = try await units.freeze("app-other.scope") else {
            Issue.record("FreezeUnit of an unknown unit succeeded")
            return
        }
        #expect(error.name == "org.freedesktop.systemd1.NoSuchUnit")
        #expect(error.message.contains("app-other.scope"))
        await units.stop()
        try await manager.stop()
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
