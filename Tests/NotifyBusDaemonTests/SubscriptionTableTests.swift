import DBus
import NotifyBus
@testable import NotifyBusDaemon
import NotifyBusProtocol
import SystemSupport
import Testing

/// The daemon's protocol logic without a bus: who owns what within which bounds, and why each
/// subscription is suspended.
@Suite("SubscriptionTable")
struct SubscriptionTableTests {
    struct Refused: Error {}

    let alice: BusName = ":1.7"
    let bob: BusName = ":1.8"

    static func identity(_ pid: Int32, group: String? = nil) -> SubscriptionTable.Identity {
        .init(process: ProcessIdentity(pid: pid, startTime: 100), group: group)
    }

    /// `owner` made known as process `pid` (in `group`): its first call waits, then it is followed.
    func known(_ table: inout SubscriptionTable, _ owner: BusName, pid: Int32, group: String? = nil) {
        _ = table.subscribe(owner: owner, call: 0, request: SubscribeRequest())
        _ = table.identified(owner, Self.identity(pid, group: group))
        _ = table.admit(owner)
    }

    /// Subscribes for an owner that is known already; the number made.
    func subscribe(
        _ table: inout SubscriptionTable, _ owner: BusName, _ followsLife: Bool
    ) throws -> (number: UInt64, actions: [SubscriptionTable.Action]) {
        let call = UInt64.random(in: 1_000...UInt64.max)
        let actions = table.subscribe(owner: owner, call: call, request: SubscribeRequest(followsFreezer: followsLife))
        guard case .create(let number, _, call)? = actions.first else { throw Refused() }
        return (number, actions)
    }

    @Test func aNewOwnersCallsWaitUntilItIsIdentifiedThenAreAdmittedInOrder() throws {
        var table = SubscriptionTable()
        let first = SubscribeRequest(patterns: ["a"])
        let second = SubscribeRequest(patterns: ["b"], followsFreezer: false)
        #expect(table.subscribe(owner: alice, call: 1, request: first) == [.identify(alice)])
        #expect(table.subscribe(owner: alice, call: 2, request: second) == [])
        #expect(table.admit(alice) == [])
        let identity = Self.identity(42)
        #expect(table.identified(alice, identity) == [.follow(alice, identity)])
        #expect(table.admit(alice) == [.create(1, first, call: 1), .create(2, second, call: 2)])
        #expect(table.identified(alice, identity) == [])
        // Known now: the next one is made at once.
        #expect(table.subscribe(owner: alice, call: 3, request: first) == [.create(3, first, call: 3)])
    }

    @Test func anOwnerThatCannotBeIdentifiedHasItsCallsRefused() {
        var table = SubscriptionTable()
        _ = table.subscribe(owner: alice, call: 1, request: SubscribeRequest())
        _ = table.subscribe(owner: alice, call: 2, request: SubscribeRequest())
        let refused = table.identified(alice, nil)
        #expect(refused.count == 2)
        #expect(refused.allSatisfy { if case .refuse(_, .failed) = $0 { true } else { false } })
        #expect(table.owners.isEmpty)
    }

    @Test func callsWaitingForTheIdentityAreBounded() {
        var table = SubscriptionTable(bounds: .init(waitingPerOwner: 2))
        _ = table.subscribe(owner: alice, call: 1, request: SubscribeRequest())
        _ = table.subscribe(owner: alice, call: 2, request: SubscribeRequest())
        guard case .refuse(3, .limitsExceeded)? = table.subscribe(owner: alice, call: 3, request: SubscribeRequest()).first else {
            Issue.record("a third waiting call was kept")
            return
        }
        // Leaving refuses the waiting calls too, so none is kept.
        #expect(table.ownerLeft(alice).count == 2)
        #expect(table.owners.isEmpty)
    }

    @Test func theLastSubscriptionForgetsItsOwner() throws {
        var table = SubscriptionTable()
        known(&table, alice, pid: 10)
        let first = try subscribe(&table, alice, true)
        let second = try subscribe(&table, alice, true)
        #expect(second.number > first.number)
        #expect(table.cancel(1) == [.remove(1)])
        #expect(table.cancel(first.number) == [.remove(first.number)])
        #expect(table.cancel(second.number) == [.remove(second.number), .forget(alice)])
        #expect(table.cancel(second.number) == [])
        #expect(table.owners.isEmpty && table.entries.isEmpty && table.applications.isEmpty && table.patternBytes == 0)
    }

    @Test func aFreezeSuspendsFollowersOnlyHoldingWhatIsNotSentAndAThawResumes() throws {
        var table = SubscriptionTable()
        known(&table, alice, pid: 10)
        let follows = try subscribe(&table, alice, true).number
        _ = try subscribe(&table, alice, false)
        #expect(table.ownerLife(alice, canRun: false) == [.suspend(1, holdingPending: true), .suspend(follows, holdingPending: true)])
        #expect(table.ownerLife(alice, canRun: false) == [])
        #expect(table.ownerLife(alice, canRun: true) == [.resume(1), .resume(follows)])
    }

    @Test func anExplicitSuspendOutlastsAThaw() throws {
        var table = SubscriptionTable()
        known(&table, alice, pid: 10)
        let number = try subscribe(&table, alice, true).number
        #expect(table.suspend(number) == [.suspend(number, holdingPending: false)])
        #expect(table.ownerLife(alice, canRun: false) == [.suspend(1, holdingPending: true)])
        #expect(table.ownerLife(alice, canRun: true) == [.resume(1)])
        #expect(table.entries[number]?.isSuspended == true)
        #expect(table.resume(number) == [.resume(number)])
        // Resume while frozen: still suspended until the thaw.
        _ = table.ownerLife(alice, canRun: false)
        #expect(table.suspend(number) == [])
        #expect(table.resume(number) == [])
        #expect(table.ownerLife(alice, canRun: true) == [.resume(1), .resume(number)])
    }

    @Test func aSubscriptionMadeWhileItsOwnerCannotRunStartsSuspended() throws {
        var table = SubscriptionTable()
        known(&table, alice, pid: 10)
        _ = table.ownerLife(alice, canRun: false)
        let late = try subscribe(&table, alice, true)
        #expect(late.actions.last == .suspend(late.number, holdingPending: true))
    }

    @Test func anOwnerLeavingRemovesAllItsSubscriptionsAndNoOneElses() throws {
        var table = SubscriptionTable()
        known(&table, alice, pid: 10)
        known(&table, bob, pid: 11)
        let a2 = try subscribe(&table, alice, false).number
        #expect(table.ownerLeft(alice) == [.remove(1), .remove(a2), .forget(alice)])
        #expect(table.entries.keys.sorted() == [2])
        #expect(table.ownerLeft(alice) == [])
        #expect(table.applications == [.process(ProcessIdentity(pid: 11, startTime: 100)): 1])
    }

    @Test func connectionsApplicationsAndTheDaemonHaveTheirBounds() throws {
        var table = SubscriptionTable(bounds: .init(perConnection: 3, perApplication: 4, inAll: 6))
        let scope = "/user.slice/app.slice/app-flatpak-org.example.App-7.scope"
        known(&table, alice, pid: 10, group: scope)
        for _ in 0..<2 { _ = try subscribe(&table, alice, true) }
        // Alice's fourth: past the connection's 3.
        #expect(throws: Refused.self) { try subscribe(&table, alice, true) }
        // Bob is the same application (its proxy, in the same scope): one more, then past 4.
        known(&table, bob, pid: 11, group: scope + "/sub")
        #expect(throws: Refused.self) { try subscribe(&table, bob, true) }
        #expect(table.applications[.scope(scope)] == 4)
        // Others count against the daemon's 6.
        let carol: BusName = ":1.9", dave: BusName = ":1.10"
        known(&table, carol, pid: 12)
        known(&table, dave, pid: 13)
        #expect(throws: Refused.self) { try subscribe(&table, dave, true) }
        #expect(table.entries.count == 6)
        // A refused first call leaves no owner behind.
        let erin: BusName = ":1.11"
        _ = table.subscribe(owner: erin, call: 99, request: SubscribeRequest())
        _ = table.identified(erin, Self.identity(14))
        #expect(table.admit(erin).last == .forget(erin))
        #expect(table.owners[erin] == nil)
        // Room again after a cancel.
        _ = table.cancel(1)
        _ = try subscribe(&table, dave, true)
    }

    @Test func patternBytesInAllAreBounded() {
        var table = SubscriptionTable(bounds: .init(patternBytesInAll: 10))
        known(&table, alice, pid: 10)
        #expect(table.patternBytes == 2)
        let long = SubscribeRequest(patterns: [KeyPattern(String(repeating: "k", count: 9))])
        guard case .refuse(_, .limitsExceeded)? = table.subscribe(owner: alice, call: 5, request: long).first else {
            Issue.record("pattern bytes past the bound were accepted")
            return
        }
        #expect(table.subscribe(owner: alice, call: 6, request: SubscribeRequest(patterns: ["12345678"])).count == 1)
        #expect(table.patternBytes == 10)
    }

    /// Calls waiting for their owners to be identified count against the pattern bytes of all,
    /// so that new connections cannot make the daemon keep their patterns without bound.
    @Test func patternsOfWaitingCallsCountAgainstTheBytesInAll() {
        var table = SubscriptionTable(bounds: .init(patternBytesInAll: 10))
        let six = SubscribeRequest(patterns: ["123456"])
        #expect(table.subscribe(owner: alice, call: 1, request: six) == [.identify(alice)])
        #expect(table.waitingPatternBytes == 6)
        guard case .refuse(2, .limitsExceeded)? = table.subscribe(owner: bob, call: 2, request: six).first else {
            Issue.record("a second connection's waiting patterns passed the bound")
            return
        }
        #expect(table.owners[bob] == nil)
        // Admitted, the bytes move from waiting to made; refused or left, they are given back.
        _ = table.identified(alice, Self.identity(10))
        _ = table.admit(alice)
        #expect(table.waitingPatternBytes == 0 && table.patternBytes == 6)
        _ = table.subscribe(owner: bob, call: 3, request: SubscribeRequest(patterns: ["1234"]))
        #expect(table.waitingPatternBytes == 4)
        _ = table.ownerLeft(bob)
        #expect(table.waitingPatternBytes == 0)
    }

    @Test func applicationsAreAppScopesElseProcesses() {
        let process = ProcessIdentity(pid: 5, startTime: 9)
        let flatpak = "/user.slice/user-1000.slice/user@1000.service/app.slice/app-flatpak-org.example.App-1234.scope"
        #expect(ApplicationID(process: process, group: flatpak) == .scope(flatpak))
        #expect(ApplicationID(process: process, group: flatpak + "/inner") == .scope(flatpak))
        #expect(ApplicationID(process: process, group: "/user.slice/app.slice/app-.scope") == .process(process))
        #expect(ApplicationID(process: process, group: "/system.slice/foo.service") == .process(process))
        #expect(ApplicationID(process: process, group: nil) == .process(process))
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
        let arguments = EventElements.signalArguments(events, firstSeq: 7, origin: origin)
        #expect(arguments.count == 1)
        let argument = try #require(arguments.first)
        let element = try #require(argument.arrayElements?[1].stringKeyedDictionary)
        #expect(element["value"]?.unwrapped == .string(#"{"n":1,"big":99999999999999999999}"#))
        #expect(element["time"]?.stringValue == "2023-11-14T22:13:22.000Z")
        #expect(element["seq"]?.unwrapped == .uint64(8))
        #expect(element["kind"]?.stringValue == "flushed")
        #expect(element["first"]?.doubleValue == 1)
        #expect(element["last"]?.doubleValue == 2)
        let decoded = EventElements.decode(argument)
        #expect(decoded.skipped.isEmpty)
        #expect(decoded.firstSeq == 7 && decoded.lastSeq == 11)
        #expect(decoded.events == events)
        // A `t` no duration holds decodes as zero instead of trapping.
        let odd = EventElements.decode(.array(elementSignature: "a{sv}", [
            .vardict([("type", .string("suspended")), ("t", .double(.infinity))]),
            .vardict([("type", .string("suspended")), ("t", .double(1e300))]),
        ]))
        #expect(odd.events == [.suspended(time: .zero), .suspended(time: .zero)])
        // Rebased on an origin one second later: the element's own times move alike.
        let rebased = EventElements.decode(argument, origin: origin.advanced(by: .seconds(1)))
        #expect(rebased.events[0] == .resumed(time: .seconds(1), flushed: 2))
        #expect(rebased.events[1].notification?.firstEventTime == .zero)
        #expect(rebased.events[1].notification?.lastEventTime == .seconds(1))
        // Without `kind` (a daemon of version 1), the kind follows from where it stands.
        let old = EventElements.decode(.array(elementSignature: "a{sv}", [
            .vardict([("type", .string("notification")), ("key", .string("k")), ("value", .string("1")), ("coalesced", .uint32(0))]),
        ]))
        #expect(old.events.first?.notification?.kind == .initial)
        #expect(old.firstSeq == nil)
    }

    /// Signals stay within 1 MiB: a flush of values that would pass it is split into consecutive
    /// signals, numbered on, each under the bound.
    @Test func aFlushPastOneMebibyteIsSplitIntoSignalsUnderIt() throws {
        let value = JSONValue.string(String(repeating: "v", count: 60_000))
        let events: [SubscriptionEvent] = [.resumed(time: .seconds(1), flushed: 40)] + (0..<40).map { index in
            .notification(BusNotification(
                key: "k/\(index)", value: value, previous: value, coalesced: 2, firstEventTime: .zero,
                lastEventTime: .seconds(1), time: .seconds(1), kind: .flushed))
        }
        let arguments = EventElements.signalArguments(events, firstSeq: 1, origin: WallTime(nanoseconds: 0))
        #expect(arguments.count == 5)
        var next: UInt64 = 1
        var decoded: [SubscriptionEvent] = []
        for argument in arguments {
            // With room for the sender (a unique name of at most 255 bytes) the bus adds.
            let size = try DBusMessage.signalSize(
                path: BusInterface.subscriptionPath(4_294_967_296), interface: BusInterface.subscriptionInterface,
                member: BusInterface.eventsSignal, destination: ":1.4294967296", arguments: [argument])
            #expect(size + 264 <= BusInterface.Limits.signalBytes)
            #expect(size > BusInterface.Limits.signalBytes / 2 || argument == arguments.last)
            let part = EventElements.decode(argument)
            #expect(part.firstSeq == next)
            next = (part.lastSeq ?? 0) + 1
            decoded += part.events
        }
        #expect(decoded == events)
    }
}
