import DBus
import EpollLoop
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

private let serviceName: BusName = "org.notifybus.ServerTest"
private let objectPath: ObjectPath = "/org/notifybus/ServerTest/calc"
private let calcInterface: InterfaceName = "org.notifybus.Calc1"

/// A server connection on a loop of its own, exporting one calculator object whose `Secret`
/// method only `allowed` may call.
private final class Server: Sendable {
    final class Shared: Sendable {
        let counter = Mutex<UInt32>(0)
        let allowed = Mutex<BusName?>(nil)
    }

    let link: LoopConnection
    let shared = Shared()

    init(bus: PrivateBus) async throws {
        let shared = self.shared
        link = try await LoopConnection(bus: bus) { connection in
            let interface = DBusInterface(
                name: calcInterface,
                methods: [
                    DBusMethod("Add", arguments: [.init("a", "i"), .init("b", "i")], results: [.init("sum", "i")]) { call in
                        guard case .int32(let a) = call.arguments[0], case .int32(let b) = call.arguments[1] else { return }
                        call.reply([.int32(a &+ b)])
                    },
                    DBusMethod("Bump") { call in
                        shared.counter.withLock { $0 += 1 }
                        try? connection.emitPropertiesChanged(path: objectPath, interface: calcInterface, names: ["Count"])
                        call.reply()
                    },
                    DBusMethod("Wrong", results: [.init("x", "s")]) { call in call.reply([.int32(1)]) },
                    DBusMethod("Forget") { _ in },
                    DBusMethod("Secret", results: [.init("x", "s")]) { call in call.reply([.string("42")]) },
                ],
                properties: [DBusProperty("Count", "u", emitsChange: true) { .uint32(shared.counter.withLock { $0 }) }],
                signals: [DBusSignalMember("Ticked", arguments: [.init("n", "u")])])
            let object = DBusObject(path: objectPath, interfaces: [interface]) { call in
                guard call.member == "Secret" else { return nil }
                return call.sender == shared.allowed.withLock({ $0 })
                    ? nil : DBusError(name: DBusError.Name.accessDenied, message: "not yours")
            }
            try? connection.export(object)
        }
    }

    func connection<R: Sendable>(_ body: @escaping @Sendable (DBusConnection) -> R) async throws -> R {
        try await link.run(body)
    }

    /// Runs `body` with the connection on its loop and awaits what it hands `done`.
    func await<R: Sendable>(
        _ body: @escaping @Sendable (DBusConnection, @escaping @Sendable (Result<R, DBusError>) -> Void) -> Void
    ) async throws -> R {
        try await link.await(body)
    }

    func requestName() async throws -> DBusConnection.NameRequestResult {
        try await self.await { connection, done in connection.requestName(serviceName, reply: done) }
    }

    func close() async {
        await link.close()
    }
}

private func waitForName(_ client: DBusClient) async -> Bool {
    await eventually { (try? await client.call(destination: serviceName, path: objectPath, interface: .peer, member: "Ping")) != nil }
}

/// A private session bus, the calculator server owning its name there, and a client that sees it.
private func servedBus() async throws -> (PrivateBus, Server, DBusClient) {
    let bus = try PrivateBus(.session)
    let server = try await Server(bus: bus)
    #expect(try await server.requestName() == .primaryOwner)
    let client = try DBusClient(address: bus.dbusAddress)
    try await client.waitUntilConnected()
    #expect(await waitForName(client))
    return (bus, server, client)
}

@Suite("D-Bus server side on a private bus")
struct DBusServerTests {
    @Test func exportedMethodsAnswerAndRefuseWrongCalls() async throws {
        let (bus, server, client) = try await servedBus()
        defer { withExtendedLifetime(bus) {} }

        let sum = try await client.call(
            destination: serviceName, path: objectPath, interface: calcInterface, member: "Add",
            arguments: [.int32(2), .int32(40)])
        #expect(sum == [.int32(42)])
        // Without an interface, the method is found among the object's interfaces.
        let again = try await client.call(
            destination: serviceName, path: objectPath, interface: nil, member: "Add", arguments: [.int32(1), .int32(1)])
        #expect(again == [.int32(2)])

        func failure(_ path: ObjectPath, _ interface: InterfaceName?, _ member: MemberName, _ arguments: [DBusValue] = []) async -> DBusError? {
            do {
                _ = try await client.call(destination: serviceName, path: path, interface: interface, member: member, arguments: arguments)
                return nil
            } catch {
                return error
            }
        }
        #expect(await failure(objectPath, calcInterface, "Add", [.string("x")])?.name == DBusError.Name.invalidArgs)
        #expect(await failure(objectPath, calcInterface, "Add", [.string("x")])?.message.contains("'ii'") == true)
        #expect(await failure(objectPath, calcInterface, "Nope")?.name == DBusError.Name.unknownMethod)
        #expect(await failure(objectPath, "org.notifybus.Other", "Add")?.name == DBusError.Name.unknownInterface)
        #expect(await failure("/nothing/here", calcInterface, "Add")?.name == DBusError.Name.unknownObject)
        // A handler that answers the wrong type, or not at all, still answers.
        #expect(await failure(objectPath, calcInterface, "Wrong")?.name == DBusError.Name.failed)
        #expect(await failure(objectPath, calcInterface, "Forget")?.name == DBusError.Name.failed)
        // libdbus answers Peer.
        #expect(await failure(objectPath, .peer, "Ping") == nil)

        // The authorize hook.
        #expect(await failure(objectPath, calcInterface, "Secret")?.name == DBusError.Name.accessDenied)
        let me = try await client.waitUntilConnected()
        server.shared.allowed.withLock { $0 = me }
        #expect(await failure(objectPath, calcInterface, "Secret") == nil)

        // The server is still there after all of that.
        #expect(try await client.call(destination: serviceName, path: objectPath, interface: calcInterface, member: "Add", arguments: [.int32(3), .int32(4)]) == [.int32(7)])
        await client.close()
        await server.close()
    }

    @Test func propertiesAndIntrospectionFollowTheDescription() async throws {
        let (bus, server, client) = try await servedBus()
        defer { withExtendedLifetime(bus) {} }

        var changes = await client.signals(matching: .propertiesChanged(sender: serviceName, path: objectPath, interface: calcInterface)).makeAsyncIterator()
        #expect(try await client.property(destination: serviceName, path: objectPath, interface: calcInterface, name: "Count") == .uint32(0))
        _ = try await client.call(destination: serviceName, path: objectPath, interface: calcInterface, member: "Bump")
        let change = try DBusPropertiesChange(try #require(await changes.next()))
        #expect(change.changed["Count"] == .uint32(1))
        let all = try await client.allProperties(destination: serviceName, path: objectPath, interface: calcInterface)
        #expect(all == ["Count": .uint32(1)])
        do {
            try await client.setProperty(destination: serviceName, path: objectPath, interface: calcInterface, name: "Count", value: .uint32(9))
            Issue.record("Set was accepted")
        } catch {
            #expect(error.name == DBusError.Name.propertyReadOnly)
        }
        do {
            _ = try await client.property(destination: serviceName, path: objectPath, interface: calcInterface, name: "Nope")
            Issue.record("an unknown property was read")
        } catch {
            #expect(error.name == DBusError.Name.unknownProperty)
        }

        func introspect(_ path: ObjectPath) async throws -> String {
            try #require(try await client.call(destination: serviceName, path: path, interface: .introspectable, member: "Introspect").first?.stringValue)
        }
        let root = try await introspect("/")
        #expect(root.contains("<node name=\"org\"/>"))
        let middle = try await introspect("/org/notifybus/ServerTest")
        #expect(middle.contains("<node name=\"calc\"/>"))
        #expect(!middle.contains(calcInterface.rawValue))
        let xml = try await introspect(objectPath)
        #expect(xml.contains("<interface name=\"org.notifybus.Calc1\">"))
        #expect(xml.contains("<arg name=\"a\" type=\"i\" direction=\"in\"/>"))
        #expect(xml.contains("<arg name=\"sum\" type=\"i\" direction=\"out\"/>"))
        #expect(xml.contains("<property name=\"Count\" type=\"u\" access=\"read\"/>"))
        #expect(xml.contains("<signal name=\"Ticked\">"))
        #expect(xml.contains("org.freedesktop.DBus.Properties"))
        await client.close()
        await server.close()
    }

    @Test func namesAndCredentialsComeFromTheBus() async throws {
        let bus = try PrivateBus(.session)
        let server = try await Server(bus: bus)
        #expect(try await server.requestName() == .primaryOwner)
        #expect(try await server.requestName() == .alreadyOwner)
        let second = try await Server(bus: bus)
        #expect(try await second.requestName() == .exists)

        let client = try DBusClient(address: bus.dbusAddress)
        let clientName = try await client.waitUntilConnected()
        let pid: UInt32 = try await server.await { connection, done in connection.processID(of: clientName, reply: done) }
        #expect(pid == UInt32(getpid()))
        await client.close()
        await second.close()
        await server.close()
    }

    /// A signal prepared once goes out from each path to each destination it is given, with the
    /// same arguments: the prepared message itself the first time, copies after it.
    @Test func aPreparedSignalIsEmittedFromAnyPathToAnyDestination() async throws {
        let (bus, server, client) = try await servedBus()
        defer { withExtendedLifetime(bus) {} }
        let second = try DBusClient(address: bus.dbusAddress)
        let firstName = try await client.waitUntilConnected()
        let secondName = try await second.waitUntilConnected()
        let rule = DBusMatchRule(interface: "org.notifybus.Values", member: "Everything")
        var atFirst = await client.signals(matching: rule).makeAsyncIterator()
        var atSecond = await second.signals(matching: rule).makeAsyncIterator()

        try await server.connection { connection in
            Result { () throws(DBusError) in
                let signal = try DBusPreparedSignal(
                    path: "/one", interface: "org.notifybus.Values", member: "Everything", arguments: everyKind,
                    destination: firstName)
                try connection.emitSignal(signal, path: "/one", destination: firstName)
                try connection.emitSignal(signal, path: "/two", destination: secondName)
                try connection.emitSignal(signal, path: "/three")
                // Its own path and destination again: a copy (the prepared message was sent).
                try connection.emitSignal(signal, path: "/one", destination: firstName)
            }
        }.get()
        for (iterator, name, path) in [(0, firstName, "/one"), (1, secondName, "/two")] {
            let unicast = try #require(iterator == 0 ? await atFirst.next() : await atSecond.next())
            #expect(unicast.path.rawValue == path)
            #expect(unicast.destination == name)
            #expect(unicast.arguments == everyKind)
            let broadcast = try #require(iterator == 0 ? await atFirst.next() : await atSecond.next())
            #expect(broadcast.path == "/three")
            #expect(broadcast.destination == nil)
            #expect(broadcast.arguments == everyKind)
        }
        let again = try #require(await atFirst.next())
        #expect(again.path == "/one" && again.destination == firstName && again.arguments == everyKind)
        // Values that cannot be sent are refused when the signal is prepared.
        let refused = try await server.connection { _ in
            (try? DBusPreparedSignal(path: "/", interface: "a.b", member: "C", arguments: [.string("nul\u{0}")])) == nil
        }
        #expect(refused)
        await client.close()
        await second.close()
        await server.close()
    }
}
