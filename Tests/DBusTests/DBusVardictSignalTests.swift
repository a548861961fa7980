import DBus
import TestSupport
import Testing

/// Signals whose argument is an `aa{sv}` written straight through libdbus's iterators arrive as
/// the same values the tree of `DBusValue`s would send, and what cannot be sent is refused.
@Suite("Signals of string-keyed dictionaries")
struct DBusVardictSignalTests {
    @Test func theyArriveAsTheTreeWouldSendThem() async throws {
        let bus = try PrivateBus(.session)
        let sender = try await LoopConnection(bus: bus)
        let senderName = try await sender.uniqueName()
        let receiver = try DBusClient(address: bus.dbusAddress)
        try await receiver.waitUntilConnected()
        let signals = await receiver.signals(matching: DBusMatchRule(sender: senderName, interface: "org.example.Vardicts1"))
        let dictionaries: [[(String, DBusValue)]] = [
            [("type", .string("notification")), ("t", .double(1.5)), ("seq", .uint64(UInt64.max)), ("n", .uint32(7)),
             ("text", .string("ünïcode ✓")), ("flag", .boolean(true)), ("path", .objectPath("/a/b"))],
            [],
            [("only", .int64(-3))],
        ]
        try await sender.run { connection in
            Result { () throws(DBusError) in
                try connection.emitSignal(
                    path: "/org/example/v", interface: "org.example.Vardicts1", member: "Changed", vardicts: dictionaries)
            }
        }.get()
        var iterator = signals.makeAsyncIterator()
        let signal = try #require(await iterator.next())
        #expect(signal.signature == "aa{sv}")
        #expect(signal.arguments == [.array(elementSignature: "a{sv}", dictionaries.map { .vardict($0) })])
        await receiver.close()
        await sender.close()
    }

    @Test func containersAndNULsAreRefused() async throws {
        let bus = try PrivateBus(.session)
        let sender = try await LoopConnection(bus: bus)
        _ = try await sender.uniqueName()
        for dictionary: [(String, DBusValue)] in [
            [("list", .strings(["a"]))], [("inner", .variant(.uint32(1)))], [("text", .string("a\u{0}b"))],
            [("key\u{0}", .uint32(1))], [("path", .objectPath("not a path"))],
        ] {
            let refused = try await sender.run { connection -> String? in
                do throws(DBusError) {
                    try connection.emitSignal(path: "/v", interface: "org.example.Vardicts1", member: "Changed", vardicts: [dictionary])
                    return nil
                } catch {
                    return error.name
                }
            }
            #expect(refused != nil, "\(dictionary) was sent")
        }
        await sender.close()
    }
}
