import DBus
import TestSupport
import EpollLoop
import Testing

#if canImport(Glibc)
import Glibc
#endif

private let testName: BusName = "org.notifybus.Test"
private let testInterface: InterfaceName = "org.notifybus.Test"
private let testPath: ObjectPath = "/org/notifybus/Test"
private let mockInterface: InterfaceName = "org.freedesktop.DBus.Mock"

/// A plain python-dbusmock object (`python3 -m dbusmock NAME PATH INTERFACE`) we add methods to.
private func plainMock(on bus: PrivateBus) async throws -> ChildProcess {
    let process = try ChildProcess(
        "/usr/bin/python3", ["-m", "dbusmock", "--system", testName.rawValue, testPath.rawValue, testName.rawValue],
        environment: bus.environment(extra: ["PYTHONDONTWRITEBYTECODE": "1"]), log: "\(bus.directory)/plain-mock.log")
    try await bus.waitForOwner(of: testName.rawValue)
    return process
}

private func addMethod(_ client: DBusClient, _ name: String, _ inSignature: String, _ outSignature: String, _ code: String) async throws {
    _ = try await client.call(
        destination: testName, path: testPath, interface: mockInterface, member: "AddMethod",
        arguments: [.string(testName.rawValue), .string(name), .string(inSignature), .string(outSignature), .string(code)])
}

@Suite("D-Bus client on a private bus")
struct DBusClientTests {
    @Test func everyTypeRoundTripsThroughTheBusAsUnicastAndBroadcastSignals() async throws {
        let bus = try PrivateBus()
        let receiver = try DBusClient(address: bus.dbusAddress)
        let sender = try DBusClient(address: bus.dbusAddress)
        let receiverName = try await receiver.waitUntilConnected()
        let senderName = try await sender.waitUntilConnected()
        #expect(receiverName.isUnique && senderName != receiverName)

        let rule = DBusMatchRule(interface: "org.notifybus.Values", member: "Everything")
        var signals = await receiver.signals(matching: rule).makeAsyncIterator()
        // Unicast: no match rule needed on the bus, dispatched by ours.
        try await sender.emitSignal(
            path: "/a", interface: "org.notifybus.Values", member: "Everything", arguments: everyKind,
            destination: receiverName)
        // Broadcast.
        try await sender.emitSignal(path: "/b", interface: "org.notifybus.Values", member: "Everything", arguments: everyKind)
        let unicast = try #require(await signals.next())
        let broadcast = try #require(await signals.next())
        #expect(unicast.arguments == everyKind)
        #expect(unicast.destination == receiverName)
        #expect(unicast.sender == senderName)
        #expect(unicast.path == "/a")
        #expect(unicast.signature == everyKind.map(\.signature).joined())
        #expect(broadcast.arguments == everyKind)
        #expect(broadcast.destination == nil)
        #expect(broadcast.path == "/b")
        await receiver.close()
        await sender.close()
    }

    @Test func invalidCallsFailWithoutCrashing() async throws {
        let bus = try PrivateBus()
        let client = try DBusClient(address: bus.dbusAddress)
        try await client.waitUntilConnected()
        await #expect(throws: DBusError.self) {
            _ = try await client.call(destination: BusName(validating: "not a name"), path: "/", interface: nil, member: "X")
        }
        await #expect(throws: DBusError.self) {
            _ = try await client.call(destination: testName, path: ObjectPath(validating: "no-slash"), interface: nil, member: "X")
        }
        await #expect(throws: DBusError.self) {
            try await client.emitSignal(path: "/", interface: "a.b", member: "C", arguments: [.array(elementSignature: "s", [.byte(1)])])
        }
        do {
            _ = try await client.call(destination: testName, path: testPath, interface: testInterface, member: "Nothing")
            Issue.record("expected ServiceUnknown")
        } catch {
            #expect(error.name == DBusError.Name.serviceUnknown)
            #expect(!error.message.isEmpty)
        }
        await client.close()
    }

    @Test func methodCallsReturnValuesErrorsAndTimeOut() async throws {
        let bus = try PrivateBus()
        let mock = try await plainMock(on: bus)
        let client = try DBusClient(address: bus.dbusAddress)
        try await client.waitUntilConnected()
        try await addMethod(client, "Add", "ii", "i", "ret = args[0] + args[1]")
        try await addMethod(client, "Greet", "sa{sv}", "(sas)", "ret = ('hi ' + args[0], sorted(args[1].keys()))")
        try await addMethod(client, "Fail", "", "", "raise dbus.exceptions.DBusException('it broke', name='org.notifybus.Error.Broken')")
        try await addMethod(client, "Slow", "", "", "import time; time.sleep(3)")

        let sum = try await client.call(
            destination: testName, path: testPath, interface: testInterface, member: "Add", arguments: [.int32(2), .int32(40)])
        #expect(sum == [.int32(42)])
        let greeting = try await client.call(
            destination: testName, path: testPath, interface: testInterface, member: "Greet",
            arguments: [.string("you"), .vardict([("b", .int32(1)), ("a", .string("x"))])])
        #expect(greeting == [.structure([.string("hi you"), .strings(["a", "b"])])])

        do {
            _ = try await client.call(destination: testName, path: testPath, interface: testInterface, member: "Fail")
            Issue.record("expected an error")
        } catch {
            #expect(error == DBusError(name: "org.notifybus.Error.Broken", message: "it broke"))
        }
        do {
            _ = try await client.call(destination: testName, path: testPath, interface: testInterface, member: "Missing")
            Issue.record("expected an error")
        } catch {
            #expect(error.name == DBusError.Name.unknownMethod)
        }
        let start = ContinuousClock.now
        do {
            _ = try await client.call(
                destination: testName, path: testPath, interface: testInterface, member: "Slow", timeout: .milliseconds(300))
            Issue.record("expected a timeout")
        } catch {
            #expect(error.name == DBusError.Name.noReply)
        }
        let elapsed = ContinuousClock.now - start
        #expect(elapsed >= .milliseconds(250) && elapsed < .seconds(2))
        await client.close()
        mock.terminate()
    }

    @Test func propertiesGetGetAllSetAndPropertiesChanged() async throws {
        let bus = try PrivateBus()
        let mock = try await plainMock(on: bus)
        let client = try DBusClient(address: bus.dbusAddress)
        try await client.waitUntilConnected()
        _ = try await client.call(
            destination: testName, path: testPath, interface: mockInterface, member: "AddProperties",
            arguments: [.string(testName.rawValue), .vardict([("Level", .double(0.5)), ("Name", .string("x")), ("Tags", .strings(["a"]))])])

        #expect(try await client.property(destination: testName, path: testPath, interface: testInterface, name: "Level") == .double(0.5))
        let all = try await client.allProperties(destination: testName, path: testPath, interface: testInterface)
        #expect(all == ["Level": .double(0.5), "Name": .string("x"), "Tags": .strings(["a"])])
        do {
            _ = try await client.property(destination: testName, path: testPath, interface: testInterface, name: "Nope")
            Issue.record("expected an error")
        } catch {
            #expect(error.name.hasSuffix("UnknownProperty"))
        }

        var changes = await client.signals(matching: .propertiesChanged(sender: testName, path: testPath, interface: testInterface))
            .makeAsyncIterator()
        try await client.setProperty(destination: testName, path: testPath, interface: testInterface, name: "Name", value: .string("y"))
        let first = try DBusPropertiesChange(try #require(await changes.next()))
        #expect(first.interface == testInterface)
        #expect(first.changed == ["Name": .string("y")])
        _ = try await client.call(
            destination: testName, path: testPath, interface: mockInterface, member: "UpdateProperties",
            arguments: [.string(testName.rawValue), .vardict([("Level", .double(0.75))])])
        let second = try DBusPropertiesChange(try #require(await changes.next()))
        #expect(second.changed == ["Level": .double(0.75)])
        #expect(second.invalidated == [])
        await client.close()
        mock.terminate()
    }

    @Test func nameOwnersAreTrackedAcrossRestarts() async throws {
        let bus = try PrivateBus()
        let client = try DBusClient(address: bus.dbusAddress)
        try await client.waitUntilConnected()
        var owners = await client.nameOwners(of: testName).makeAsyncIterator()
        #expect(await owners.next() == .some(nil))

        let first = try await plainMock(on: bus)
        let firstOwner = try #require(await owners.next() ?? nil)
        #expect(firstOwner.isUnique)
        first.terminate()
        #expect(await owners.next() == .some(nil))
        let second = try await plainMock(on: bus)
        let secondOwner = try #require(await owners.next() ?? nil)
        #expect(secondOwner != firstOwner)

        // A subscription by well-known name follows the new owner; the old owner's signals
        // (here: anyone else's) are not taken for the name's.
        let other = try DBusClient(address: bus.dbusAddress)
        try await other.waitUntilConnected()
        var signals = await client.signals(matching: DBusMatchRule(sender: testName, interface: "org.notifybus.X")).makeAsyncIterator()
        try await other.emitSignal(path: "/", interface: "org.notifybus.X", member: "Fake", destination: await client.waitUntilConnected())
        _ = try await client.call(
            destination: testName, path: testPath, interface: mockInterface, member: "EmitSignal",
            arguments: [.string("org.notifybus.X"), .string("Real"), .string(""), .array(elementSignature: "v", [])])
        let received = try #require(await signals.next())
        #expect(received.member == "Real")
        #expect(received.sender == secondOwner)
        second.terminate()
        await other.close()
        await client.close()
    }

    @Test func ownersArrivingAreFollowedWithoutTheirLeavingWhenDeparturesAreNotAskedFor() async throws {
        let bus = try PrivateBus()
        let client = try DBusClient(address: bus.dbusAddress)
        try await client.waitUntilConnected()
        var owners = await client.nameOwners(of: testName, followsDepartures: false).makeAsyncIterator()
        #expect(await owners.next() == .some(nil))
        let first = try await plainMock(on: bus)
        let firstOwner = try #require(await owners.next() ?? nil)
        first.terminate()
        try await bus.waitForNoOwner(of: testName.rawValue)
        // Its leaving was not sent to us: the next thing heard is the next owner.
        let second = try await plainMock(on: bus)
        let next = await owners.next()
        #expect(next != .some(nil), "the owner's leaving was heard")
        #expect(next != .some(firstOwner))
        // A second follower of the same name that follows departures hears the next one leave.
        var all = await client.nameOwners(of: testName).makeAsyncIterator()
        #expect(await all.next() != .some(nil))
        second.terminate()
        #expect(await all.next() == .some(nil))
        await client.close()
    }

    @Test func reconnectsWhenTheBusComesBack() async throws {
        let bus = try PrivateBus()
        let client = try DBusClient(
            address: bus.dbusAddress, configuration: .init(initialBackoff: .milliseconds(50), maximumBackoff: .milliseconds(200)))
        let firstName = try await client.waitUntilConnected()
        let states = Recorder<DBusConnection.State>()
        let updates = await client.stateUpdates()
        let watcher = Task { for await state in updates { states.append(state) } }
        let signals = Recorder<DBusSignal>()
        let stream = await client.signals(matching: DBusMatchRule(interface: "org.notifybus.Y"))
        let reader = Task { for await signal in stream { signals.append(signal) } }

        bus.stop()
        #expect(await states.wait { $0.contains { if case .disconnected = $0 { true } else { false } } })
        // Calls fail fast while it is down.
        await #expect(throws: DBusError.self) {
            _ = try await client.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "GetId")
        }
        try bus.start()
        #expect(await states.wait { $0.contains { if case .connected = $0 { true } else { false } } })
        let secondName = try await client.waitUntilConnected()
        #expect(secondName.isUnique)
        _ = firstName

        // The subscription was set up again on the new bus.
        let other = try DBusClient(address: bus.dbusAddress)
        try await other.waitUntilConnected()
        try await other.emitSignal(path: "/", interface: "org.notifybus.Y", member: "Again")
        #expect(await signals.wait { $0.count == 1 })
        watcher.cancel()
        reader.cancel()
        await other.close()
        await client.close()
    }

    @Test func unreachableBusKeepsTryingWithoutCrashing() async throws {
        let directory = try makeTemporaryDirectory("notifybus-nobus")
        defer { removeTree(directory) }
        let client = try DBusClient(
            address: .address("unix:path=\(directory)/none"),
            configuration: .init(initialBackoff: .milliseconds(20), maximumBackoff: .milliseconds(50)))
        do {
            try await client.waitUntilConnected(timeout: .milliseconds(300))
            Issue.record("connected to nothing")
        } catch {
            #expect(error.name == DBusError.Name.noServer || error.name == DBusError.Name.failed || error.name.hasPrefix("org.freedesktop.DBus.Error"))
        }
        guard case .disconnected = await client.state else {
            Issue.record("expected disconnected")
            return
        }
        await client.close()
        #expect(await client.state == .closed)
    }
}
