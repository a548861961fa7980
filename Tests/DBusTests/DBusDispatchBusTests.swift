import DBus
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

private let serviceName: BusName = "org.notifybus.DispatchTest"
private let counterInterface: InterfaceName = "org.notifybus.Counter1"
private let itemInterface: InterfaceName = "org.notifybus.Item1"
private let itemPrefix: ObjectPath = "/org/notifybus/DispatchTest/item"

/// What the server's handlers saw, and who owns which item of its subtree.
private final class Seen: Sendable {
    let counted = Mutex<[Int]>([])
    let bumps = Mutex(0)
    let pokes = Mutex<[String]>([])
    let owners = Mutex<[ObjectPath: BusName]>([:])
}

/// A server exporting `/counter` (open to all: `Count(ay) → u` with a budget for 200,000
/// bytes, `Bump()`, `Add(ii) → i`, property `Bumps`) and the subtree `item/<n>` whose items are
/// their owner's alone (`Poke()`, property `Owner`).
private func startServer(
    on bus: PrivateBus, seen: Seen, configuration: DBusConnection.Configuration = .init()
) async throws -> LoopConnection {
    let server = try await LoopConnection(bus: bus, configuration: configuration) { connection in
        let counter = DBusInterface(
            name: counterInterface,
            methods: [
                DBusMethod(
                    "Count", arguments: [.init("bytes", "ay")], results: [.init("n", "u")],
                    budget: DBusDecodingBudget(values: 200_001, depth: 1, stringBytes: 0)
                ) { call in
                    let count = call.arguments.first?.arrayElements?.count ?? -1
                    seen.counted.withLock { $0.append(count) }
                    call.reply([.uint32(UInt32(max(0, count)))])
                },
                DBusMethod("Bump") { call in
                    seen.bumps.withLock { $0 += 1 }
                    call.reply()
                },
                DBusMethod("Add", arguments: [.init("a", "i"), .init("b", "i")], results: [.init("sum", "i")]) { call in
                    guard case .int32(let a) = call.arguments[0], case .int32(let b) = call.arguments[1] else { return }
                    call.reply([.int32(a &+ b)])
                },
            ],
            properties: [DBusProperty("Bumps", "u") { .uint32(UInt32(seen.bumps.withLock { $0 })) }])
        try? connection.export(DBusObject(path: "/counter", interfaces: [counter]))
        let item = DBusInterface(
            name: itemInterface,
            methods: [DBusMethod("Poke") { call in
                seen.pokes.withLock { $0.append("\(call.sender) \(call.path)") }
                call.reply()
            }],
            properties: [DBusProperty("Owner", "s", emitsChange: true) { path in
                .string(seen.owners.withLock { $0[path]?.rawValue ?? "" })
            }])
        try? connection.export(DBusSubtree(
            prefix: itemPrefix, interfaces: [item],
            resolve: { path in seen.owners.withLock { $0[path] != nil } },
            enumerate: { seen.owners.withLock { Array($0.keys) } },
            authorize: { header in
                seen.owners.withLock { $0[header.path] } == header.sender
                    ? nil : DBusError(name: DBusError.Name.accessDenied, message: "\(header.path) is not yours")
            }))
    }
    #expect(try await server.requestName(serviceName) == .primaryOwner)
    return server
}

private func failure(
    _ client: DBusClient, _ path: ObjectPath, _ interface: InterfaceName?, _ member: MemberName, _ arguments: [DBusValue] = []
) async -> String? {
    do {
        _ = try await client.call(destination: serviceName, path: path, interface: interface, member: member, arguments: arguments)
        return nil
    } catch {
        return error.name
    }
}

/// Serialized: the test of a huge call measures this process's resident memory, which the
/// others' large calls would add to.
@Suite("Dispatch on a private bus", .serialized)
struct DBusDispatchBusTests {
    @Test func aSubtreeServesItsObjectsToTheirOwnersAlone() async throws {
        let bus = try PrivateBus(.session)
        let seen = Seen()
        let server = try await startServer(on: bus, seen: seen)
        let owner = try DBusClient(address: bus.dbusAddress)
        let stranger = try DBusClient(address: bus.dbusAddress)
        let ownerName = try await owner.waitUntilConnected()
        let strangerName = try await stranger.waitUntilConnected()
        let one = ObjectPath(rawValue: itemPrefix.rawValue + "/1")!
        let two = ObjectPath(rawValue: itemPrefix.rawValue + "/2")!
        seen.owners.withLock { $0 = [one: ownerName, two: strangerName] }

        #expect(await failure(owner, one, itemInterface, "Poke") == nil)
        #expect(await failure(stranger, one, itemInterface, "Poke") == DBusError.Name.accessDenied)
        #expect(await failure(stranger, one, itemInterface, "Nope") == DBusError.Name.accessDenied)
        #expect(await failure(stranger, one, .properties, "GetAll", [.string(itemInterface.rawValue)]) == DBusError.Name.accessDenied)
        #expect(await failure(stranger, two, itemInterface, "Poke") == nil)
        #expect(seen.pokes.withLock { $0 } == ["\(ownerName) \(one)", "\(strangerName) \(two)"])
        #expect(try await owner.property(destination: serviceName, path: one, interface: itemInterface, name: "Owner")
            == .string(ownerName.rawValue))

        // Introspection is open, and lists the items there are.
        let xml = try await stranger.call(destination: serviceName, path: one, interface: .introspectable, member: "Introspect")
        #expect(xml.first?.stringValue?.contains("<method name=\"Poke\"/>") == true)
        func children() async throws -> String {
            try await owner.call(destination: serviceName, path: itemPrefix, interface: .introspectable, member: "Introspect")
                .first?.stringValue ?? ""
        }
        #expect(try await children().contains("<node name=\"1\"/>"))
        #expect(try await children().contains("<node name=\"2\"/>"))
        seen.owners.withLock { $0[two] = nil }
        #expect(await failure(stranger, two, itemInterface, "Poke") == DBusError.Name.unknownObject)
        #expect(try await !children().contains("<node name=\"2\"/>"))

        // PropertiesChanged from a subtree's object carries the value at its path.
        var changes = await owner.signals(matching: .propertiesChanged(sender: serviceName, path: one, interface: itemInterface))
            .makeAsyncIterator()
        _ = try await owner.call(destination: .bus, path: .bus, interface: .bus, member: "GetId")
        try await server.run { connection in
            Result { () throws(DBusError) in try connection.emitPropertiesChanged(path: one, interface: itemInterface, names: ["Owner"]) }
        }.get()
        let change = try DBusPropertiesChange(try #require(await changes.next()))
        #expect(change.changed["Owner"] == .string(ownerName.rawValue))
        await owner.close()
        await stranger.close()
        await server.close()
    }

    @Test func theBodyLimitAndTheBudgetAreHeldToOnTheBus() async throws {
        let bus = try PrivateBus(.session)
        let seen = Seen()
        let server = try await startServer(on: bus, seen: seen)
        let client = try DBusClient(address: bus.dbusAddress)
        try await client.waitUntilConnected()
        func count(_ n: Int) async -> String? {
            await failure(client, "/counter", counterInterface, "Count", [.array(elementSignature: "y", Array(repeating: .byte(7), count: n))])
        }
        // The body is 4 bytes of length and the array: 128 KiB exactly is accepted, one more byte is not.
        #expect(await count(131_068) == nil)
        #expect(await count(131_069) == DBusError.Name.limitsExceeded)
        #expect(await failure(client, "/counter", counterInterface, "Add", [.array(elementSignature: "y", Array(repeating: .byte(7), count: 131_069))])
            == DBusError.Name.limitsExceeded)
        #expect(seen.counted.withLock { $0 } == [131_068])
        await client.close()
        await server.close()
    }

    /// A hostile 30 MB `ay`, to an object that does not exist, to a defined method and to one of
    /// another signature, is refused with the configured name quickly, and the server's
    /// resident memory grows by about twice the message while it is received (with glibc's mmap
    /// threshold fixed, see `fixMmapThreshold()`).
    @Test func aHugeCallIsRefusedUnreadQuicklyAndWithBoundedMemory() async throws {
        let bus = try PrivateBus(.session)
        let seen = Seen()
        let server = try await startServer(
            on: bus, seen: seen,
            configuration: .init(limitsExceeded: "org.notifybus.Error.LimitsExceeded"))
        let size = 30_000_000
        fixMmapThreshold()
        resetPeakResidentSize()
        let before = residentSizes()
        let lines = try runPython("""
            import sys, time, dbus
            bus = dbus.bus.BusConnection(sys.argv[1])
            payload = dbus.ByteArray(b"\\0" * int(sys.argv[2]))
            for path, member in (("/nothing", "Count"), ("/counter", "Count"), ("/counter", "Add"), ("/counter", "Count")):
                start = time.monotonic()
                try:
                    bus.call_blocking("\(serviceName)", path, "\(counterInterface)", member, "ay", (payload,), timeout=30)
                    name = "answered"
                except dbus.DBusException as error:
                    name = error.get_dbus_name()
                print(name, time.monotonic() - start, flush=True)
            print("small", bus.call_blocking("\(serviceName)", "/counter", "\(counterInterface)", "Count", "ay", (dbus.ByteArray(b"ab"),)), flush=True)
            """, [bus.address, "\(size)"], bus: bus)
        let after = residentSizes()
        #expect(lines.count == 5, "\(lines)")
        let names = lines.prefix(4).map { $0.split(separator: " ").first.map(String.init) ?? "" }
        let seconds = lines.prefix(4).map { Double($0.split(separator: " ").last ?? "") ?? 99 }
        #expect(names == [DBusError.Name.unknownObject] + Array(repeating: "org.notifybus.Error.LimitsExceeded", count: 3))
        #expect(seconds.allSatisfy { $0 < 1 }, "\(seconds)")
        #expect(lines.last == "small 2")
        let growth = after.peak - before.current
        print("30 MB calls answered in \(seconds) s; resident \(before.current >> 20) MiB before, peak \(after.peak >> 20) MiB")
        // libdbus holds the message twice while reading it: its read buffer and the body it
        // copies out of it. Nothing more is made of it (the other tests running meanwhile take
        // a few MiB).
        #expect(growth < 2 * size + 8 << 20, "resident memory grew by \(growth) bytes for a \(size)-byte message")
        #expect(seen.counted.withLock { $0 } == [2])
        await server.close()
    }

    /// Calls sent with `NO_REPLY_EXPECTED` are dispatched as any other (a defined method's
    /// handler runs) and never answered, whatever they are refused for. The bus is set to
    /// deliver replies nobody asked for, and a libdbus peer that answers them anyway shows the
    /// client would see one.
    @Test func callsExpectingNoReplyRunAndAreNeverAnswered() async throws {
        let bus = try PrivateBus(.session, configuration: """
            <policy context="default">
              <allow send_destination="*" send_requested_reply="false"/>
              <allow receive_sender="*" receive_requested_reply="false"/>
            </policy>
            """)
        let seen = Seen()
        let server = try await startServer(on: bus, seen: seen)
        let serverName = try await server.uniqueName()
        seen.owners.withLock { $0 = [ObjectPath(rawValue: itemPrefix.rawValue + "/1")!: ":1.9999"] }
        let lines = try runPython("""
            import sys, json, dbus, dbus.lowlevel
            from dbus.mainloop.glib import DBusGMainLoop
            from gi.repository import GLib
            DBusGMainLoop(set_as_default=True)
            client = dbus.bus.BusConnection(sys.argv[1])
            peer = dbus.bus.BusConnection(sys.argv[1])
            replies = {}
            def seen(connection, message):
                if message.get_type() in (2, 3):
                    replies.setdefault(message.get_sender(), []).append(message.get_error_name() or "return")
                return dbus.lowlevel.HANDLER_RESULT_NOT_YET_HANDLED
            client.add_message_filter(seen)
            def send(destination, path, interface, member, signature=None, *arguments):
                message = dbus.lowlevel.MethodCallMessage(destination, path, interface, member)
                if signature is not None:
                    message.append(signature=signature, *arguments)
                message.set_no_reply(True)
                client.send_message(message)
            send(peer.get_unique_name(), "/nothing", "org.example.Nope", "Nope")
            service, counter = "\(serviceName)", "\(counterInterface)"
            send(service, "/nothing", counter, "Bump")
            send(service, "/counter", "org.example.Nope", "Bump")
            send(service, "/counter", counter, "Nope")
            send(service, "/counter", counter, "Add", "s", "wrong")
            send(service, "/counter", counter, "Count", "ay", dbus.ByteArray(b"x" * 200000))
            send(service, "\(itemPrefix)/1", "\(itemInterface)", "Poke")
            send(service, "/counter", "org.freedesktop.DBus.Properties", "Get", "ss", counter, "Bumps")
            send(service, "/counter", "org.freedesktop.DBus.Introspectable", "Introspect")
            for _ in range(3):
                send(service, "/counter", counter, "Bump")
            loop = GLib.MainLoop()
            last = []
            def finished(*results):
                last.extend(str(result) for result in results)
                GLib.timeout_add(300, loop.quit)
            client.call_async(service, "/counter", counter, "Add", "ii", (1, 2), finished, finished)
            GLib.timeout_add(10000, loop.quit)
            loop.run()
            print(json.dumps({"peer": replies.get(peer.get_unique_name(), []), "server": replies.get(sys.argv[2], []), "last": last}))
            """, [bus.address, serverName.rawValue], bus: bus)
        // The peer answered its call although asked not to; the server answered only the last call
        // (whose reply goes to its pending call, not through the filter).
        #expect(lines == ["{\"peer\": [\"org.freedesktop.DBus.Error.UnknownMethod\"], \"server\": [], \"last\": [\"3\"]}"])
        #expect(seen.bumps.withLock { $0 } == 3)
        #expect(seen.pokes.withLock { $0 }.isEmpty)
        await server.close()
    }
}
