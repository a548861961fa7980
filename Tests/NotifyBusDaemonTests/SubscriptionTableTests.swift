import DBus
import NotifyBus
@testable import NotifyBusDaemon
import NotifyBusProtocol
import Testing

/// The daemon's protocol logic without a bus: who owns what, and why each subscription is suspended.
@Suite("SubscriptionTable")
struct SubscriptionTableTests {
    struct Refused: Error {}

    func subscribe(
        _ table: inout SubscriptionTable, _ owner: BusName, _ followsLife: Bool
    ) throws -> (number: UInt64, actions: [SubscriptionTable.Action]) {
        guard let made = table.subscribe(owner: owner, followsLife: followsLife) else { throw Refused() }
        return made
    }

    let alice: BusName = ":1.7"
    let bob: BusName = ":1.8"

    @Test func theFirstSubscriptionFollowsItsOwnerAndTheLastForgetsIt() throws {
        var table = SubscriptionTable()
        let first = try subscribe(&table, alice, true)
        #expect(first.actions == [.follow(alice), .create(first.number)])
        let second = try subscribe(&table, alice, true)
        #expect(second.actions == [.create(second.number)])
        #expect(second.number > first.number)
        #expect(table.cancel(first.number) == [.remove(first.number)])
        #expect(table.cancel(second.number) == [.remove(second.number), .forget(alice)])
        #expect(table.cancel(second.number) == [])
    }

    @Test func aFreezeSuspendsFollowersOnlyAndAThawResumesWhatItSuspended() throws {
        var table = SubscriptionTable()
        let follows = try subscribe(&table, alice, true).number
        let ignores = try subscribe(&table, alice, false).number
        #expect(table.ownerLife(alice, canRun: false) == [.suspend(follows)])
        #expect(table.ownerLife(alice, canRun: false) == [])
        #expect(table.ownerLife(alice, canRun: true) == [.resume(follows)])
        _ = ignores
    }

    @Test func anExplicitSuspendOutlastsAThaw() throws {
        var table = SubscriptionTable()
        let number = try subscribe(&table, alice, true).number
        #expect(table.suspend(number) == [.suspend(number)])
        #expect(table.ownerLife(alice, canRun: false) == [])
        #expect(table.ownerLife(alice, canRun: true) == [])
        #expect(table.entries[number]?.isSuspended == true)
        #expect(table.resume(number) == [.resume(number)])
        // Resume while frozen: still suspended until the thaw.
        #expect(table.ownerLife(alice, canRun: false) == [.suspend(number)])
        #expect(table.suspend(number) == [])
        #expect(table.resume(number) == [])
        #expect(table.ownerLife(alice, canRun: true) == [.resume(number)])
    }

    @Test func aSubscriptionMadeWhileItsOwnerCannotRunStartsSuspended() throws {
        var table = SubscriptionTable()
        _ = try subscribe(&table, alice, true)
        _ = table.ownerLife(alice, canRun: false)
        let late = try subscribe(&table, alice, true)
        #expect(late.actions == [.create(late.number), .suspend(late.number)])
    }

    @Test func anOwnerLeavingRemovesAllItsSubscriptionsAndNoOneElses() throws {
        var table = SubscriptionTable()
        let a1 = try subscribe(&table, alice, true).number
        let b1 = try subscribe(&table, bob, true).number
        let a2 = try subscribe(&table, alice, false).number
        #expect(table.ownerLeft(alice) == [.remove(a1), .remove(a2), .forget(alice)])
        #expect(table.entries.keys.sorted() == [b1])
        #expect(table.ownerLeft(alice) == [])
    }

    @Test func anOwnerHasAtMostItsLimit() {
        var table = SubscriptionTable(perOwnerLimit: 3)
        for _ in 0..<3 { #expect(table.subscribe(owner: alice, followsLife: true) != nil) }
        #expect(table.subscribe(owner: alice, followsLife: true) == nil)
        #expect(table.subscribe(owner: bob, followsLife: true) != nil)
    }
}

@Suite("Subscribe requests and Events elements")
struct ProtocolTests {
    func refusal(_ arguments: [DBusValue]) -> SubscribeRequest.Refusal? {
        do {
            _ = try SubscribeRequest(arguments: arguments)
            return nil
        } catch {
            return error
        }
    }

    @Test func optionsAreCheckedByNameTypeAndValue() throws {
        let request = try SubscribeRequest(arguments: [
            .strings(["a/*", "b"]),
            .vardict([("policy", .string("changed")), ("limit", .uint32(7)), ("initial", .string("current")), ("follow-freezer", .boolean(false))]),
        ])
        #expect(request == SubscribeRequest(patterns: ["a/*", "b"], policy: .changed, limit: 7, initial: .current, followsFreezer: false))
        #expect(try SubscribeRequest(arguments: [.strings([]), .vardict([])]).patterns == [.all])
        #expect(try SubscribeRequest(arguments: request.arguments) == request)
        guard case .invalidArgs(let message)? = refusal([.strings([]), .vardict([("limit", .int32(3))])]) else {
            Issue.record("limit as i accepted")
            return
        }
        #expect(message.contains("limit"))
        #expect(refusal([.strings([]), .vardict([("policy", .string("x"))])]) != nil)
        #expect(refusal([.strings([]), .vardict([("initial", .string("later"))])]) != nil)
        #expect(refusal([.strings([]), .vardict([("nope", .boolean(true))])]) != nil)
        #expect(refusal([.int32(1)]) != nil)
        guard case .limitsExceeded? = refusal([.strings(Array(repeating: "k", count: 65)), .vardict([])]) else {
            Issue.record("65 patterns accepted")
            return
        }
    }

    @Test func eventsRoundTripWithNumbersInTheirJSONForm() throws {
        let origin = WallTime(nanoseconds: 1_700_000_000_000_000_000)
        let events: [SubscriptionEvent] = [
            .resumed(time: .seconds(2), flushed: 2),
            .notification(BusNotification(
                key: "k", value: ["n": 1, "big": .decimal(try #require(JSONDecimal("99999999999999999999")))],
                previous: 1.5, coalesced: 3, firstEventTime: .seconds(1), lastEventTime: .seconds(2), time: .seconds(2),
                kind: .flushed)),
            .resync(time: .seconds(2), reason: .limit),
            .notification(BusNotification(
                key: "j", value: nil, previous: nil, coalesced: 0, firstEventTime: .seconds(2), lastEventTime: .seconds(2),
                time: .seconds(2), kind: .resync)),
            .suspended(time: .seconds(3)),
        ]
        let argument = EventElements.signalArgument(events, origin: origin)
        let element = try #require(argument.arrayElements?[1].stringKeyedDictionary)
        #expect(element["value"]?.unwrapped == .string(#"{"n":1,"big":99999999999999999999}"#))
        #expect(element["time"]?.stringValue == "2023-11-14T22:13:22.000Z")
        let decoded = EventElements.decode(argument)
        #expect(decoded.skipped.isEmpty)
        #expect(decoded.events.count == 5)
        #expect(decoded.events[1].notification?.value == events[1].notification?.value)
        #expect(decoded.events[1].notification?.kind == .flushed)
        #expect(decoded.events[3].notification?.kind == .resync)
        // A `t` no duration holds decodes as zero instead of trapping.
        let odd = EventElements.decode(.array(elementSignature: "a{sv}", [
            .vardict([("type", .string("suspended")), ("t", .double(.infinity))]),
            .vardict([("type", .string("suspended")), ("t", .double(1e300))]),
        ]))
        #expect(odd.events == [.suspended(time: .zero), .suspended(time: .zero)])
        // Rebased on an origin one second later.
        let rebased = EventElements.decode(argument, origin: origin.advanced(by: .seconds(1)))
        #expect(rebased.events[0] == .resumed(time: .seconds(1), flushed: 2))
    }
}
