import DBus
import EpollLoop
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

private let sourceName: BusName = "org.notifybus.RealSource"
private let sourcePath: ObjectPath = "/org/notifybus/RealSource"
private let sourceInterface: InterfaceName = "org.notifybus.RealSource1"

@Suite("Signals of a well-known sender on a private bus")
struct DBusSignalOwnerTests {
    /// An impostor sends unicast signals with the real interface, path and member to a
    /// subscriber of the well-known name: before the name's owner is known (none is accepted,
    /// not even the real owner's) and after (only the owner's).
    @Test func onlyTheCurrentKnownOwnerIsHeard() async throws {
        let bus = try PrivateBus(.session)
        let real = try await LoopConnection(bus: bus)
        #expect(try await real.requestName(sourceName) == .primaryOwner)
        let realName = try await real.uniqueName()
        let subscriber = try await LoopConnection(bus: bus)
        let subscriberName = try await subscriber.uniqueName()
        let impostor = try DBusClient(address: bus.dbusAddress)
        try await impostor.waitUntilConnected()
        let heard = Recorder<String>()

        func emit(_ text: String, from connection: LoopConnection) async throws {
            try await connection.run { connection in
                Result { () throws(DBusError) in
                    try connection.emitSignal(
                        path: sourcePath, interface: sourceInterface, member: "Changed", arguments: [.string(text)],
                        destination: subscriberName)
                }
            }.get()
        }
        /// A round trip to the bus after a send: what was sent is queued for the subscriber.
        func roundTrip(_ client: DBusClient) async throws {
            _ = try await client.call(destination: .bus, path: .bus, interface: .bus, member: "GetId")
        }

        // Hold the subscriber's loop while the signals are sent, then subscribe: they are read
        // and dispatched after the rule exists and before the owner is known (the answer to
        // GetNameOwner comes after them).
        let release = Atomic<Bool>(false)
        try subscriber.loop.execute { [key = subscriber.key] context in
            while !release.load(ordering: .acquiring) { usleep(1000) }
            context[local: key]!.signals(matching: DBusMatchRule(
                sender: sourceName, path: sourcePath, interface: sourceInterface, member: "Changed")
            ) { signal in heard.append(signal.arguments.first?.stringValue ?? "?") }
        }
        try await impostor.emitSignal(
            path: sourcePath, interface: sourceInterface, member: "Changed", arguments: [.string("impostor before")],
            destination: subscriberName)
        try await roundTrip(impostor)
        try await emit("owner before", from: real)
        try await real.await { connection, done in
            connection.call(destination: .bus, path: .bus, interface: .bus, member: "GetId") { done($0.map { _ in () }) }
        }
        release.store(true, ordering: .releasing)
        #expect(await eventually { (try? await subscriber.run { $0.knownOwner(of: sourceName) }) == .some(.some(realName)) })

        // Now the owner is known.
        try await impostor.emitSignal(
            path: sourcePath, interface: sourceInterface, member: "Changed", arguments: [.string("impostor after")],
            destination: subscriberName)
        try await roundTrip(impostor)
        try await emit("owner after", from: real)
        #expect(await heard.wait { $0.contains("owner after") })
        #expect(heard.all == ["owner after"])
        await impostor.close()
        await subscriber.close()
        await real.close()
    }
}
