import NotifyBus
import Testing

/// `suspendHoldingPending`: events ready but not yet taken go back into the hold, so the consumer
/// that polls gets only the `suspended` mark, and the resume flushes them, counted.
@Suite struct HoldPendingTests {
    let bus = NotificationBus(clock: .zero)

    @Test func eventsNotYetTakenAreHeldAndFlushedOnResume() {
        let ready = ReadyCounter()
        let sub = bus.subscribeForPolling(counter: ready)
        bus.publish("a", 1, at: .s(1))
        bus.publish("b", 2, at: .s(2))
        bus.publish("a", 3, at: .s(3))
        #expect(ready.count == 1)
        sub.suspendHoldingPending(at: .s(4))
        #expect(sub.poll() == [.suspended(time: .s(4))])
        bus.publish("b", 5, at: .s(5))
        sub.resume(at: .s(6))
        #expect(ready.count == 2)
        let events = sub.poll()
        #expect(events.first == .resumed(time: .s(6), flushed: 2))
        let notes = events.compactMap(\.notification)
        #expect(notes.map(Note.init) == [Note("a", 3, 2), Note("b", 5, 2)])
        #expect(notes.allSatisfy { $0.kind == .flushed && $0.time == .s(6) })
        #expect(notes.map(\.firstEventTime) == [.s(1), .s(2)])
        #expect(notes.map(\.lastEventTime) == [.s(3), .s(5)])
    }

    @Test func previousIsWhatTheConsumerLastTook() {
        let sub = bus.subscribeForPolling(counter: ReadyCounter())
        bus.publish("a", 0, at: .s(1))
        #expect(sub.pollNotes() == [Note("a", 0)])
        bus.publish("a", 1, at: .s(2))
        sub.suspendHoldingPending(at: .s(3))
        sub.resume(at: .s(4))
        #expect(sub.pollNotes() == [Note("a", 1, 1, previous: 0)])
    }

    @Test func itemsBeforeTheLastMarkStayWhereTheyAre() {
        bus.publish("k", 0, at: .zero)
        let sub = bus.subscribeForPolling(initial: .current, counter: ReadyCounter())
        bus.publish("k", 1, at: .s(1))
        sub.suspend(at: .s(2))
        bus.publish("k", 2, at: .s(3))
        sub.resume(at: .s(4))
        bus.publish("k", 3, at: .s(5))
        bus.publish("j", 4, at: .s(6))
        sub.suspendHoldingPending(at: .s(7))
        let events = sub.poll()
        #expect(events.map(Self.describe) == [
            "k=0 ×0", "k=1 ×1", "suspended@2", "resumed(1)@4", "k=2 ×1", "suspended@7",
        ])
        sub.resume(at: .s(8))
        #expect(sub.poll().map(Self.describe) == ["resumed(2)@8", "k=3 ×1", "j=4 ×1"])
    }

    @Test func aSlowSubscribersBacklogComesAfterItsOutboxSoTheLatestValueWins() {
        let sub = bus.subscribeForPolling(counter: ReadyCounter())
        let mark = NotificationBus.defaultHighWaterMark
        // The outbox fills to its high-water mark; later events collapse into the backlog.
        for i in 0..<(mark + 10) { bus.publish("k\(i % 4)", .integer(Int64(i)), at: .seconds(i)) }
        bus.publish("late", 1, at: .seconds(mark + 10))
        sub.suspendHoldingPending(at: .seconds(mark + 20))
        #expect(sub.poll() == [.suspended(time: .seconds(mark + 20))])
        sub.resume(at: .seconds(mark + 30))
        let events = sub.poll()
        #expect(events.first == .resumed(time: .seconds(mark + 30), flushed: 5))
        let notes = events.compactMap(\.notification)
        // Every event counted once; each key's latest value; in order of each key's latest event.
        #expect(notes.map(\.coalesced).reduce(0, +) == mark + 11)
        #expect(notes.map(\.key) == ["k2", "k3", "k0", "k1", "late"])
        #expect(notes.prefix(4).map(\.value) == (mark + 6..<mark + 10).map { .integer(Int64($0)) })
        #expect(notes[0].firstEventTime == .seconds(2) && notes[0].lastEventTime == .seconds(mark + 6))
    }

    @Test func underAllEveryEventIsFlushedInOrder() {
        let sub = bus.subscribeForPolling(policy: .all, counter: ReadyCounter())
        bus.publish("a", 1, at: .s(1))
        bus.publish("b", 2, at: .s(2))
        bus.publish("a", 3, at: .s(3))
        sub.suspendHoldingPending(at: .s(4))
        #expect(sub.poll() == [.suspended(time: .s(4))])
        bus.publish("a", 4, at: .s(5))
        sub.resume(at: .s(6))
        let events = sub.poll()
        #expect(events.first == .resumed(time: .s(6), flushed: 4))
        #expect(events.compactMap(\.notification).map(Note.init) == [
            Note("a", 1), Note("b", 2), Note("a", 3, previous: 1), Note("a", 4, previous: 3),
        ])
    }

    @Test func underAllASlowSubscribersEventsKeepTheirOrder() {
        let sub = bus.subscribeForPolling(policy: .all, limit: 4096, counter: ReadyCounter())
        let count = NotificationBus.defaultHighWaterMark + 50
        for i in 0..<count { bus.publish("k\(i % 3)", .integer(Int64(i)), at: .zero) }
        sub.suspendHoldingPending(at: .s(1))
        #expect(sub.poll() == [.suspended(time: .s(1))])
        sub.resume(at: .s(2))
        let notes = sub.poll().compactMap(\.notification)
        #expect(notes.map(\.value) == (0..<count).map { .integer(Int64($0)) })
        #expect(notes.allSatisfy { $0.coalesced == 1 })
    }

    @Test func underDropTheyAreDiscarded() {
        let sub = bus.subscribeForPolling(policy: .drop, counter: ReadyCounter())
        bus.publish("a", 1, at: .s(1))
        sub.suspendHoldingPending(at: .s(2))
        #expect(sub.poll() == [.suspended(time: .s(2))])
        bus.publish("a", 2, at: .s(3))
        sub.resume(at: .s(4))
        #expect(sub.poll() == [.resumed(time: .s(4), flushed: 0)])
    }

    @Test func underDropASlowSubscribersBacklogIsDiscardedToo() {
        let sub = bus.subscribeForPolling(policy: .drop, limit: 2, counter: ReadyCounter())
        for i in 0..<(NotificationBus.defaultHighWaterMark + 10) { bus.publish("k\(i)", 1, at: .zero) }
        sub.suspendHoldingPending(at: .s(1))
        #expect(sub.poll() == [.suspended(time: .s(1))])
        sub.resume(at: .s(2))
        #expect(sub.poll() == [.resumed(time: .s(2), flushed: 0)])
    }

    @Test func underChangedANetZeroChangeGivesNothing() {
        let sub = bus.subscribeForPolling(policy: .changed, counter: ReadyCounter())
        bus.publish("a", 1, at: .s(1))
        #expect(sub.pollNotes() == [Note("a", 1)])
        bus.publish("a", 2, at: .s(2))
        bus.publish("b", 5, at: .s(3))
        sub.suspendHoldingPending(at: .s(4))
        bus.publish("a", 1, at: .s(5))
        sub.resume(at: .s(6))
        let events = sub.poll()
        #expect(events.prefix(2) == [.suspended(time: .s(4)), .resumed(time: .s(6), flushed: 1)])
        #expect(events.compactMap(\.notification).map(Note.init) == [Note("b", 5, 1)])
    }

    @Test func pastTheLimitItResyncsOnResume() {
        let sub = bus.subscribeForPolling(limit: 2, counter: ReadyCounter())
        bus.publish("a", 1, at: .s(1))
        bus.publish("b", 2, at: .s(2))
        bus.publish("c", 3, at: .s(3))
        sub.suspendHoldingPending(at: .s(4))
        #expect(sub.poll() == [.suspended(time: .s(4))])
        sub.resume(at: .s(5))
        let events = sub.poll()
        #expect(events.prefix(2) == [.resumed(time: .s(5), flushed: 3), .resync(time: .s(5), reason: .limit)])
        #expect(events.compactMap(\.notification).map(Note.init) == [Note("a", 1, 0), Note("b", 2, 0), Note("c", 3, 0)])
    }

    @Test func heldEntriesCountAgainstTheBudgetUntilTheResume() {
        let budget = bus.makeHoldBudget(limit: 10)
        let sub = bus.subscribeForPolling(budget: budget, counter: ReadyCounter())
        bus.publish("a", 1, at: .s(1))
        bus.publish("b", 2, at: .s(2))
        bus.publish("a", 3, at: .s(3))
        sub.suspendHoldingPending(at: .s(4))
        #expect(budget.heldCount == 2)
        sub.resume(at: .s(5))
        #expect(budget.heldCount == 0)
        #expect(sub.poll().prefix(2) == [.suspended(time: .s(4)), .resumed(time: .s(5), flushed: 2)])
    }

    @Test func onASuspendedSubscriptionItDoesNothing() {
        let sub = bus.subscribeForPolling(counter: ReadyCounter())
        sub.suspend(at: .s(1))
        bus.publish("a", 1, at: .s(2))
        sub.suspendHoldingPending(at: .s(3))
        #expect(sub.poll() == [.suspended(time: .s(1))])
        sub.resume(at: .s(4))
        #expect(sub.poll().first == .resumed(time: .s(4), flushed: 1))
    }

    static func describe(_ event: SubscriptionEvent) -> String {
        switch event {
        case .notification(let n): "\(n.key)=\(n.value.jsonText) ×\(n.coalesced)"
        case .suspended(let t): "suspended@\(t.components.seconds)"
        case .resumed(let t, let flushed): "resumed(\(flushed))@\(t.components.seconds)"
        case .resync(let t, let reason): "resync(\(reason.rawValue))@\(t.components.seconds)"
        }
    }
}
