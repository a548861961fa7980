import DBus
import TestSupport
import EpollLoop
import Testing

#if canImport(Glibc)
import Glibc
#endif

private let name: BusName = "org.notifybus.Proxied"
private let path: ObjectPath = "/org/notifybus/Proxied"
private let interface: InterfaceName = "org.notifybus.Proxied"
private let mockInterface: InterfaceName = "org.freedesktop.DBus.Mock"

/// What a proxy told, recorded on the loop thread.
private enum Told: Sendable, Hashable {
    case owner(BusName?)
    case loaded([String: DBusValue])
    case changed([String: DBusValue], invalidated: [String])
    case loadFailed(String)
    case malformed
    case signal(MemberName, sender: BusName)
}

/// A python-dbusmock object named `name` with the properties `Level` and `Name`.
private func startMock(on bus: PrivateBus, level: Double = 0.5) async throws -> ChildProcess {
    let process = try ChildProcess(
        "/usr/bin/python3", ["-m", "dbusmock", "--system", name.rawValue, path.rawValue, interface.rawValue],
        environment: bus.environment(extra: ["PYTHONDONTWRITEBYTECODE": "1"]), log: "\(bus.directory)/proxied.log")
    try await bus.waitForOwner(of: name.rawValue)
    let client = try DBusClient(address: bus.dbusAddress)
    try await client.waitUntilConnected()
    _ = try await client.call(
        destination: name, path: path, interface: mockInterface, member: "AddProperties",
        arguments: [.string(interface.rawValue), .vardict([("Level", .double(level)), ("Name", .string("x"))])])
    await client.close()
    return process
}

private func mock(_ client: DBusClient, _ member: MemberName, _ arguments: [DBusValue]) async throws {
    _ = try await client.call(destination: name, path: path, interface: mockInterface, member: member, arguments: arguments)
}

/// A connection and a proxy on a loop of their own, with what the proxy tells recorded.
private final class ProxyHarness: Sendable {
    let loop: EventLoopThread
    let told = Recorder<Told>()
    private let key = LoopLocalKey<DBusProxy>()

    init(bus: PrivateBus) throws {
        loop = try EventLoopThread(name: "proxy-test")
        let key = self.key
        let told = self.told
        try loop.execute { context in
            let connection = DBusConnection(address: bus.dbusAddress, context: context)
            let proxy = DBusProxy(connection: connection, destination: name, path: path, interface: interface)
            proxy.onOwnerChange { told.append(.owner($0)) }
            proxy.onPropertiesChange { event in
                switch event {
                case .loaded(let properties): told.append(.loaded(properties))
                case .changed(let change): told.append(.changed(change.changed, invalidated: change.invalidated))
                case .loadFailed(let error): told.append(.loadFailed(error.name))
                case .malformedSignal: told.append(.malformed)
                }
            }
            proxy.onSignal("Ping") { told.append(.signal($0.member, sender: $0.sender)) }
            context[local: key] = proxy
            connection.connect()
        }
    }

    /// Runs `body` with the proxy on its loop.
    func with<R: Sendable>(_ body: @escaping @Sendable (DBusProxy) -> R) async throws -> R {
        let key = self.key
        return try await loop.submit { context in body(context[local: key]!) }
    }

    /// Holds the proxy's loop (up to 10 s) until `flag` records something, then runs `body`
    /// with the proxy there: what the bus sends meanwhile waits undispatched.
    func holdLoop(until flag: Recorder<Bool>, then body: @escaping @Sendable (DBusProxy) -> Void) throws {
        let key = self.key
        try loop.execute { context in
            var waited = 0
            while flag.all.isEmpty, waited < 10_000 {
                usleep(1000)
                waited += 1
            }
            body(context[local: key]!)
        }
    }

    func call(_ member: MemberName, _ arguments: [DBusValue]) async throws -> Result<[DBusValue], DBusError> {
        let key = self.key
        return await withCheckedContinuation { continuation in
            try? loop.execute { context in
                context[local: key]!.call(member, arguments: arguments) { continuation.resume(returning: $0) }
            }
        }
    }

    func shutdown() async {
        let key = self.key
        _ = try? await loop.submit { context in
            context[local: key]?.connection.close()
            context[local: key]?.close()
            context[local: key] = nil
        }
        await loop.shutdown()
    }
}

@Suite("D-Bus proxy on a private bus")
struct DBusProxyTests {
    @Test func readsWithGetAllFollowsPropertiesChangedAndTheOwner() async throws {
        let bus = try PrivateBus()
        let first = try await startMock(on: bus)
        let client = try DBusClient(address: bus.dbusAddress)
        try await client.waitUntilConnected()
        let proxy = try ProxyHarness(bus: bus)
        let initial: [String: DBusValue] = ["Level": .double(0.5), "Name": .string("x")]
        #expect(await proxy.told.wait { $0.contains(.loaded(initial)) })
        let firstOwner = try #require(try await proxy.with { $0.owner })
        #expect(proxy.told.all.first == .owner(firstOwner))

        try await mock(client, "UpdateProperties", [.string(interface.rawValue), .vardict([("Level", .double(0.75))])])
        #expect(await proxy.told.wait { $0.contains(.changed(["Level": .double(0.75)], invalidated: [])) })
        #expect(try await proxy.with { $0.properties } == ["Level": .double(0.75), "Name": .string("x")])
        let firstEpoch = try await proxy.with { $0.epoch }

        // The service goes: no owner, nothing cached.
        first.terminate()
        #expect(await proxy.told.wait { $0.last == .owner(nil) })
        #expect(try await proxy.with { $0.owner == nil && $0.isOwnerKnown && $0.properties.isEmpty })
        #expect(try await proxy.with { $0.epoch } > firstEpoch)

        // Another process takes the name: a new epoch, read again.
        proxy.told.removeAll()
        let second = try await startMock(on: bus, level: 0.25)
        // Read as soon as it owns the name (before the mock has its properties), then on request.
        #expect(await proxy.told.wait { $0.contains { if case .loaded = $0 { true } else { false } } })
        try await proxy.with { $0.reloadProperties() }
        #expect(await proxy.told.wait { $0.contains(.loaded(["Level": .double(0.25), "Name": .string("x")])) })
        let secondOwner = try #require(try await proxy.with { $0.owner })
        #expect(secondOwner != firstOwner)
        #expect(proxy.told.all.contains(.owner(secondOwner)))
        #expect(try await proxy.with { $0.epoch } >= firstEpoch + 2)

        await proxy.shutdown()
        await client.close()
        second.terminate()
    }

    @Test func aChangeSignalledWhileGetAllIsOutstandingIsNotLost() async throws {
        let bus = try PrivateBus()
        let service = try await startMock(on: bus)
        let client = try DBusClient(address: bus.dbusAddress)
        try await client.waitUntilConnected()
        // GetAll answers with the values from before a change it signals first, as a threaded
        // service can: the signal reaches the proxy before the (stale) answer.
        try await mock(client, "AddMethod", [
            .string(InterfaceName.properties.rawValue), .string("GetAll"), .string("s"), .string("a{sv}"),
            .string("old = dict(self.props[args[0]]); self.UpdateProperties(args[0], {'Level': dbus.Double(0.9)}); ret = old"),
        ])
        let proxy = try ProxyHarness(bus: bus)
        #expect(await proxy.told.wait { $0.contains { if case .loaded = $0 { true } else { false } } })
        #expect(try await proxy.with { $0.properties["Level"] } == .double(0.9))
        // The change is told when it arrives, and the answer, taken before it, does not take it back.
        let told = proxy.told.all.filter { if case .owner = $0 { false } else { true } }
        #expect(told == [
            .changed(["Level": .double(0.9)], invalidated: []), .loaded(["Level": .double(0.9), "Name": .string("x")]),
        ])
        await proxy.shutdown()
        await client.close()
        service.terminate()
    }

    @Test func aRoundTripToTheBusMakesTheOwnerCurrent() async throws {
        let bus = try PrivateBus()
        let client = try DBusClient(address: bus.dbusAddress)
        let clientName = try await client.waitUntilConnected()
        _ = try await client.call(
            destination: .bus, path: .bus, interface: .bus, member: "RequestName",
            arguments: [.string(name.rawValue), .uint32(0)])
        let proxy = try ProxyHarness(bus: bus)
        #expect(await proxy.told.wait { $0.contains(.owner(clientName)) })

        // The name is given up while the proxy's loop is held: its NameOwnerChanged waits,
        // undispatched, when the round trip starts, and is handled before the round trip ends.
        let released = Recorder<Bool>()
        let seen = Recorder<BusName?>()
        try proxy.holdLoop(until: released) { proxy in
            seen.append(proxy.owner)
            proxy.syncOwner(timeout: .seconds(2)) { seen.append(proxy.owner) }
        }
        _ = try await client.call(
            destination: .bus, path: .bus, interface: .bus, member: "ReleaseName", arguments: [.string(name.rawValue)])
        released.append(true)
        #expect(await seen.wait { $0.count == 2 })
        #expect(seen.all == [clientName, nil])
        await proxy.shutdown()
        await client.close()
    }

    @Test func callsGoToTheOwnerAndSignalsComeOnlyFromIt() async throws {
        let bus = try PrivateBus()
        let service = try await startMock(on: bus)
        let client = try DBusClient(address: bus.dbusAddress)
        try await client.waitUntilConnected()
        try await mock(client, "AddMethod", [
            .string(interface.rawValue), .string("Add"), .string("ii"), .string("i"), .string("ret = args[0] + args[1]"),
        ])
        let proxy = try ProxyHarness(bus: bus)
        #expect(await proxy.told.wait { $0.contains { if case .loaded = $0 { true } else { false } } })
        #expect(try await proxy.call("Add", [.int32(2), .int32(40)]) == .success([.int32(42)]))
        if case .failure(let error) = try await proxy.call("Missing", []) {
            #expect(error.name == DBusError.Name.unknownMethod)
        } else {
            Issue.record("expected an error")
        }

        let us = try #require(try await proxy.with { $0.connection.uniqueName })
        let owner = try #require(try await proxy.with { $0.owner })
        // Someone else's Ping, unicast to us with the same path and interface, is not the service's.
        try await client.emitSignal(path: path, interface: interface, member: "Ping", destination: us)
        try await client.emitSignal(path: path, interface: interface, member: "Ping")
        try await mock(client, "EmitSignal", [
            .string(interface.rawValue), .string("Ping"), .string(""), .array(elementSignature: "v", []),
        ])
        #expect(await proxy.told.wait { $0.contains(.signal("Ping", sender: owner)) })
        #expect(proxy.told.all.filter { if case .signal = $0 { true } else { false } } == [.signal("Ping", sender: owner)])
        await proxy.shutdown()
        await client.close()
        service.terminate()
    }
}
