import Mosquitto
import NotifyBus
import NotifyBusMQTT
import NotifyBusSources
import OrderedCollections
import Testing

/// The link's logic without a broker: what is owed, merged and re-sent across outages.
@Suite struct MQTTLinkStateTests {
    typealias Message = MQTTLinkState.Message

    func note(_ key: String, _ value: JSONValue, _ coalesced: Int, at seconds: Int64) -> SubscriptionEvent {
        .notification(BusNotification(
            key: key, value: value, previous: nil, coalesced: coalesced, firstEventTime: .seconds(seconds),
            lastEventTime: .seconds(seconds), time: .seconds(seconds), kind: coalesced == 0 ? .initial : .flushed))
    }

    func published(_ actions: [MQTTLinkState.Action]) -> [Message] {
        actions.compactMap { if case .publish(let message) = $0 { return message } else { return nil } }
    }

    /// A link connected at once whose first connection published the current values of `keys`
    /// (at time 0, each acknowledged): later notifications of those keys are changes.
    func connected(knowing keys: [String]) -> MQTTLinkState {
        var state = MQTTLinkState()
        _ = state.handle(.start)
        _ = state.handle(.connected(sessionPresent: false))
        var pending = published(state.handle(.notifications(keys.map { note($0, 0, 0, at: 0) })))
        var messageID: Int32 = 10_000
        while !pending.isEmpty {
            messageID += 1
            _ = state.handle(.sent(pending.removeFirst(), messageID: messageID))
            pending += published(state.handle(.acknowledged(messageID: messageID)))
        }
        return state
    }

    @Test func initialValuesWaitForTheFirstConnectionAndMergeWithWhatFollows() {
        var state = MQTTLinkState()
        #expect(state.handle(.start) == [.connect(.v5)])
        #expect(state.handle(.notifications([note("a", 1, 0, at: 1), note("b", 2, 0, at: 2)])).isEmpty)
        #expect(state.handle(.notifications([note("a", 3, 2, at: 5)])).isEmpty)
        let actions = state.handle(.connected(sessionPresent: false))
        #expect(actions == [.status(.running), .publishOnline(true), .resume(resync: false)])
        // What the resume makes ready: nothing more; the owed messages leave in order of each
        // key's latest event, `a` at its latest value; on the first connection they are the
        // current values, `coalesced` 0 whatever came before it.
        let sent = published(state.handle(.notifications([])))
        #expect(sent == [Message(key: "b", value: 2, time: .seconds(2), coalesced: 0),
                         Message(key: "a", value: 3, time: .seconds(5), coalesced: 0)])
        // Later ones carry their counts.
        #expect(published(state.handle(.notifications([note("a", 4, 2, at: 6)]))) == [
            Message(key: "a", value: 4, time: .seconds(6), coalesced: 2)])
    }

    @Test func aSourcesFirstValueOfAKeyIsACurrentValueWhenTheBrokerAnsweredFirst() {
        var state = MQTTLinkState()
        _ = state.handle(.start)
        // The broker answers before any source has published: the resume's flush has the one
        // key the bus already had.
        _ = state.handle(.connected(sessionPresent: false))
        #expect(published(state.handle(.notifications([note("old", 1, 0, at: 0)]))) == [
            Message(key: "old", value: 1, time: .seconds(0), coalesced: 0)])
        // Then the sources' first values, live events of keys the link has never sent: current
        // values, `coalesced` 0; a change of a key the link has sent counts 1.
        let first = published(state.handle(.notifications([
            liveEvent("battery/BAT0/level", 0.5, at: 1), liveEvent("old", 2, at: 2),
            liveEvent("battery/BAT0/level", 0.49, at: 3),
        ])))
        #expect(first == [
            Message(key: "battery/BAT0/level", value: 0.5, time: .seconds(1), coalesced: 0),
            Message(key: "old", value: 2, time: .seconds(2), coalesced: 1),
            Message(key: "battery/BAT0/level", value: 0.49, time: .seconds(3), coalesced: 1),
        ])
        // A key whose first events come during an outage: its message is its current value too.
        _ = state.handle(.connectionLost(reason: "gone", random: 0.5))
        _ = state.handle(.notifications([note("new", 7, 3, at: 9)]))
        _ = state.handle(.retryDue)
        _ = state.handle(.connected(sessionPresent: true))
        #expect(published(state.handle(.notifications([]))).first { $0.key == "new" }
            == Message(key: "new", value: 7, time: .seconds(9), coalesced: 0))
    }

    @Test func anUnacknowledgedPublishIsOwedAgainWithItsCount() {
        var state = connected(knowing: ["k", "j"])
        let live = published(state.handle(.notifications([note("k", 1, 1, at: 1), note("j", 7, 1, at: 2)])))
        #expect(live.count == 2)
        _ = state.handle(.sent(live[0], messageID: 1))
        _ = state.handle(.sent(live[1], messageID: 2))
        _ = state.handle(.acknowledged(messageID: 2))
        let lost = state.handle(.connectionLost(reason: "gone", random: 0.5))
        #expect(lost == [.closeClient, .suspend, .status(.unavailable(reason: "gone")), .scheduleRetry(.seconds(1))])
        #expect(state.unsent.keys.elements == ["k"])
        // While away, `k` changes twice more: one message, counting the unacknowledged one too.
        _ = state.handle(.notifications([note("k", 3, 2, at: 9)]))
        #expect(state.handle(.retryDue) == [.connect(.v5)])
        #expect(state.handle(.connected(sessionPresent: true)) == [.status(.running), .publishOnline(true), .resume(resync: false)])
        #expect(published(state.handle(.notifications([]))) == [Message(key: "k", value: 3, time: .seconds(9), coalesced: 3)])
    }

    @Test func aBrokerThatRefusesMQTT5IsAskedAgainIn311AtOnceAndFromThenOn() {
        var state = MQTTLinkState()
        #expect(state.handle(.start) == [.connect(.v5)])
        // No delay and no failure counted: the same attempt, in the broker's version.
        #expect(state.handle(.versionRefused(reason: "unsupported protocol version", random: 0.5)) == [.closeClient, .connect(.v311)])
        #expect(state.phase == .connecting && state.failures == 0 && state.protocolVersion == .v311)
        // 3.1.1 refused as well: an ordinary failure, retried later in 3.1.1.
        let refused = state.handle(.versionRefused(reason: "unacceptable protocol version", random: 0.5))
        #expect(refused == [.closeClient, .status(.unavailable(reason: "unacceptable protocol version")), .scheduleRetry(.seconds(1))])
        #expect(state.handle(.retryDue) == [.connect(.v311)])
        _ = state.handle(.connected(sessionPresent: false))
        _ = state.handle(.connectionLost(reason: "gone", random: 0.5))
        #expect(state.handle(.retryDue) == [.connect(.v311)])
    }

    @Test func aBrokerSlowerThanTheBusGetsTheLatestValuesNotAGrowingQueue() {
        var state = connected(knowing: (0..<30).map { "k\($0)" })
        let window = MQTTLinkState.window
        // 100 changes of 30 keys at once: the window's worth leaves, the rest waits, one per key.
        var burst: [SubscriptionEvent] = []
        for change in 0..<100 { burst.append(note("k\(change % 30)", .integer(Int64(change)), 1, at: Int64(change))) }
        let first = published(state.handle(.notifications(burst)))
        #expect(first.count == window && state.unsent.count == 30 - window)
        for (index, message) in first.enumerated() { _ = state.handle(.sent(message, messageID: Int32(index + 1))) }
        // More changes of the same keys while none is acknowledged: nothing more leaves.
        #expect(published(state.handle(.notifications([note("k0", 1000, 1, at: 1000)]))).isEmpty)
        #expect(state.unsent.count == 30 - window && state.inflight.count == window)
        // Each acknowledgement makes room for one more.
        let next = published(state.handle(.acknowledged(messageID: 1)))
        #expect(next.map(\.key) == ["k1"])
        _ = state.handle(.sent(next[0], messageID: 100))
        #expect(published(state.handle(.acknowledged(messageID: 2))).map(\.key) == ["k2"])
        // A message that can never be published frees its place too.
        #expect(published(state.handle(.dropped(Message(key: "k2", value: 92, time: .seconds(92), coalesced: 4)))).map(\.key) == ["k3"])
        // A clean stop sends everything owed, then `$online` false.
        let stop = state.handle(.stop)
        #expect(stop.last == .publishOnline(false))
        #expect(published(stop).map(\.key) == ["k4", "k5", "k6", "k7", "k8", "k9", "k0"])
        #expect(published(stop).last == Message(key: "k0", value: 1000, time: .seconds(1000), coalesced: 5))
    }

    @Test func anOlderPublishOwedAgainNeverHidesTheLatestValue() {
        var state = connected(knowing: (0..<MQTTLinkState.window).map { "k\($0)" } + ["late", "later"])
        // The window full: 20 keys in flight, `k0` among them at 1; then `k0` changes to 2 and
        // waits, as do `late` and `later`.
        var burst: [SubscriptionEvent] = []
        for index in 0..<MQTTLinkState.window { burst.append(note("k\(index)", 1, 1, at: Int64(index))) }
        let first = published(state.handle(.notifications(burst)))
        for (index, message) in first.enumerated() { _ = state.handle(.sent(message, messageID: Int32(index + 1))) }
        _ = state.handle(.notifications([note("late", 7, 1, at: 50), note("k0", 2, 1, at: 60), note("later", 8, 1, at: 70)]))
        // The connection drops: the unacknowledged `k0` at 1 must not replace the waiting `k0`
        // at 2; it adds its count. Keys owed only by the in-flight publishes come first (their
        // events are older), then the waiting ones in their order.
        _ = state.handle(.connectionLost(reason: "gone", random: 0.5))
        let owed = Array(state.unsent.values)
        #expect(owed.first { $0.key == "k0" } == Message(key: "k0", value: 2, time: .seconds(60), coalesced: 2))
        #expect(owed.map(\.key) == (1..<MQTTLinkState.window).map { "k\($0)" } + ["late", "k0", "later"])
    }

    func liveEvent(_ key: String, _ value: JSONValue, at seconds: Int64) -> SubscriptionEvent {
        .notification(BusNotification(
            key: key, value: value, previous: nil, coalesced: 1, firstEventTime: .seconds(seconds),
            lastEventTime: .seconds(seconds), time: .seconds(seconds), kind: .live))
    }

    @Test func connectedEveryLiveEventLeavesInOrderAndTheBusKeepsTheBacklog() {
        var state = connected(knowing: ["k"])
        // The bus has events: taken at once while the window has room.
        #expect(state.handle(.ready) == [.poll])
        // 30 changes of one key: each its own message, `coalesced` 1, in publish order; the
        // window's worth leaves, the rest waits in order (no merging of live events).
        let burst = (0..<30).map { liveEvent("k", .integer(Int64($0)), at: Int64($0)) }
        let first = published(state.handle(.notifications(burst)))
        #expect(first.map(\.value) == (0..<MQTTLinkState.window).map { JSONValue.integer(Int64($0)) })
        #expect(first.allSatisfy { $0.coalesced == 1 } && state.live.count == 30 - MQTTLinkState.window)
        for (index, message) in first.enumerated() { _ = state.handle(.sent(message, messageID: Int32(index + 1))) }
        // More is ready in the bus: not taken while the link still holds events (the bus keeps
        // the backlog, collapsing it past its high-water mark).
        #expect(state.handle(.ready).isEmpty)
        let next = published(state.handle(.acknowledged(messageID: 1)))
        #expect(next == [Message(key: "k", value: 20, time: .seconds(20), coalesced: 1)])
        _ = state.handle(.sent(next[0], messageID: 21))
        // The bus is polled once every held live event has left and the window has room again.
        var polls: [Int] = []
        for id in 2...20 {
            let actions = state.handle(.acknowledged(messageID: Int32(id)))
            if actions.contains(.poll) { polls.append(id) }
            for message in published(actions) { _ = state.handle(.sent(message, messageID: Int32(100 + id))) }
        }
        #expect(state.live.isEmpty && polls == [11], "\(polls)")
    }

    @Test func liveEventsNotSentWhenTheConnectionDropsAreOwedOnePerKey() {
        var state = connected(knowing: ["a", "b"])
        let burst = (0..<25).map { liveEvent($0 % 2 == 0 ? "a" : "b", .integer(Int64($0)), at: Int64($0)) }
        for (index, message) in published(state.handle(.notifications(burst))).enumerated() {
            _ = state.handle(.sent(message, messageID: Int32(index + 1)))
        }
        _ = state.handle(.connectionLost(reason: "gone", random: 0.5))
        // In flight and waiting alike: one message per key, its latest value, every event counted.
        #expect(Array(state.unsent.values) == [
            Message(key: "b", value: 23, time: .seconds(23), coalesced: 12),
            Message(key: "a", value: 24, time: .seconds(24), coalesced: 13),
        ])
    }

    @Test func aLostSessionAsksForEveryValue() {
        var state = MQTTLinkState()
        _ = state.handle(.start)
        _ = state.handle(.connected(sessionPresent: false))
        _ = state.handle(.connectionLost(reason: "gone", random: 0.5))
        _ = state.handle(.retryDue)
        #expect(state.handle(.connected(sessionPresent: false)).contains(.resume(resync: true)))
    }

    @Test func delaysDoubleToAMinuteWithinTwentyPercent() {
        #expect(MQTTLinkState.delay(afterFailures: 1, random: 0.5) == .seconds(1))
        #expect(MQTTLinkState.delay(afterFailures: 2, random: 0.5) == .seconds(2))
        #expect(MQTTLinkState.delay(afterFailures: 6, random: 0.5) == .seconds(32))
        #expect(MQTTLinkState.delay(afterFailures: 7, random: 0.5) == .seconds(60))
        #expect(MQTTLinkState.delay(afterFailures: 40, random: 0.5) == .seconds(60))
        #expect(MQTTLinkState.delay(afterFailures: 1, random: 0) == .milliseconds(800))
        #expect(MQTTLinkState.delay(afterFailures: 7, random: 1) == .seconds(72))
        var state = MQTTLinkState()
        _ = state.handle(.start)
        var delays: [Duration] = []
        for _ in 0..<8 {
            for action in state.handle(.connectionLost(reason: "refused", random: 0.5)) {
                if case .scheduleRetry(let delay) = action { delays.append(delay) }
            }
            _ = state.handle(.retryDue)
        }
        #expect(delays == [1, 2, 4, 8, 16, 32, 60, 60].map { Duration.seconds($0) })
    }

    @Test func aCleanStopPublishesOfflineThenDisconnects() {
        var state = MQTTLinkState()
        _ = state.handle(.start)
        _ = state.handle(.connected(sessionPresent: true))
        #expect(state.handle(.stop) == [.publishOnline(false)])
        state.offlineSent(messageID: 9)
        #expect(state.handle(.acknowledged(messageID: 8)).isEmpty)
        #expect(state.handle(.acknowledged(messageID: 9)) == [.disconnect])
        #expect(state.handle(.connectionLost(reason: "disconnected", random: 0)) == [.closeClient, .finished])
        #expect(state.phase == .stopped)
    }

    @Test func stoppingWhileAwayEndsAtOnce() {
        var state = MQTTLinkState()
        _ = state.handle(.start)
        _ = state.handle(.connectionLost(reason: "refused", random: 0.5))
        #expect(state.handle(.stop) == [.closeClient, .finished])
        #expect(state.handle(.retryDue).isEmpty)
    }
}
