import NotifyBus
import Testing

/// `Subscription.resync(at:)`: every current value again, with a `resync` mark of reason `requested`.
@Suite struct ResyncTests {
    let bus = NotificationBus(clock: .zero)

    @Test func anActiveSubscriptionGetsEveryCurrentValueNow() {
        let ready = ReadyCounter()
        let sub = bus.subscribeForPolling(["k/*"], counter: ready)
        bus.publish("k/a", 1, at: .s(1))
        bus.publish("k/b", 2, at: .s(2))
        bus.publish("other", 0, at: .s(2))
        #expect(sub.pollNotes().count == 2)
        bus.publish("k/a", 3, at: .s(3))
        sub.resync(at: .s(5))
        #expect(ready.count == 2)
        let events = sub.poll()
        #expect(events.count == 4)
        #expect(events[0].notification.map(Note.init) == Note("k/a", 3, previous: 1))
        #expect(events[1] == .resync(time: .s(5), reason: .requested))
        let values = events.dropFirst(2).compactMap(\.notification)
        // In order of each key's latest event: k/b (t 2) before k/a (t 3).
        #expect(values.map(Note.init) == [Note("k/b", 2, 0, previous: 2), Note("k/a", 3, 0, previous: 3)])
        #expect(values.allSatisfy { $0.kind == .resync && $0.time == .s(5) })
        #expect(values.map(\.lastEventTime) == [.s(2), .s(3)])
    }

    @Test(arguments: DeliveryPolicy.allCases)
    func everyValueComesWhateverThePolicy(policy: DeliveryPolicy) {
        let sub = bus.subscribe(policy: policy, at: .zero)
        bus.publish("a", 1, at: .s(1))
        bus.publish("b", 2, at: .s(2))
        _ = sub.poll()
        sub.resync(at: .s(3))
        #expect(sub.poll().map(HoldPendingTests.describe) == ["resync(requested)@3", "a=1 ×0", "b=2 ×0"])
    }

    @Test func aSuspendedSubscriptionGetsThemOnResume() {
        let budget = bus.makeHoldBudget(limit: 100)
        let sub = bus.subscribeForPolling(budget: budget, counter: ReadyCounter())
        bus.publish("a", 1, at: .s(1))
        _ = sub.poll()
        sub.suspend(at: .s(2))
        bus.publish("a", 4, at: .s(3))
        bus.publish("b", 5, at: .s(4))
        #expect(budget.heldCount == 2)
        sub.resync(at: .s(5))
        #expect(budget.heldCount == 0)
        bus.publish("c", 6, at: .s(6))
        #expect(budget.heldCount == 0)
        #expect(sub.poll() == [.suspended(time: .s(2))])
        sub.resume(at: .s(9))
        let events = sub.poll()
        #expect(events.map(HoldPendingTests.describe) == [
            "resumed(3)@9", "resync(requested)@9", "a=4 ×0", "b=5 ×0", "c=6 ×0",
        ])
        #expect(events.compactMap(\.notification).first?.previous == 1)
        #expect(events.compactMap(\.notification).allSatisfy { $0.kind == .resync && $0.time == .s(9) })
        // Afterwards it holds again as usual.
        sub.suspend(at: .s(10))
        bus.publish("a", 7, at: .s(11))
        sub.resume(at: .s(12))
        #expect(sub.poll().map(HoldPendingTests.describe) == ["suspended@10", "resumed(1)@12", "a=7 ×1"])
    }

    @Test func underDropASuspendedSubscriptionGetsThemOnResumeToo() {
        let sub = bus.subscribe(policy: .drop, at: .zero)
        bus.publish("a", 1, at: .s(1))
        sub.suspend(at: .s(2))
        bus.publish("a", 2, at: .s(3))
        sub.resync(at: .s(4))
        sub.resume(at: .s(5))
        #expect(sub.poll().map(HoldPendingTests.describe) == [
            "a=1 ×1", "suspended@2", "resumed(1)@5", "resync(requested)@5", "a=2 ×0",
        ])
    }

    @Test func aRequestAfterALimitOverflowIsWhatTheResumeSays() {
        let sub = bus.subscribe(policy: .changed, limit: 1, at: .zero)
        bus.publish("a", 1, at: .s(1))
        bus.publish("b", 1, at: .s(1))
        _ = sub.poll()
        sub.suspend(at: .s(2))
        bus.publish("a", 2, at: .s(3))
        bus.publish("c", 3, at: .s(4))
        sub.resync(at: .s(5))
        sub.resume(at: .s(6))
        // Requested: every value, even b's, which under `changed` a limit resync would skip.
        #expect(sub.poll().map(HoldPendingTests.describe) == [
            "suspended@2", "resumed(3)@6", "resync(requested)@6", "b=1 ×0", "a=2 ×0", "c=3 ×0",
        ])
    }

    @Test func aSlowSubscribersBacklogIsReplacedByTheValues() {
        let sub = bus.subscribeForPolling(counter: ReadyCounter())
        let mark = NotificationBus.defaultHighWaterMark
        for i in 0..<(mark + 10) { bus.publish("k\(i % 2)", .integer(Int64(i)), at: .zero) }
        sub.resync(at: .s(1))
        let events = sub.poll()
        #expect(events.count == mark + 3)
        #expect(events[mark] == .resync(time: .s(1), reason: .requested))
        #expect(events.suffix(2).compactMap(\.notification).map(\.value) == [.integer(Int64(mark + 8)), .integer(Int64(mark + 9))])
        #expect(!events.contains { $0.notification?.kind == .collapsed })
    }

    @Test func aCancelledSubscriptionGetsNothing() {
        let sub = bus.subscribe(at: .zero)
        bus.publish("a", 1, at: .s(1))
        sub.cancel()
        sub.resync(at: .s(2))
        #expect(sub.poll().isEmpty)
    }

    @Test func theReasonsRawValuesAreTheContractsNames() {
        #expect(ResyncReason.limit.rawValue == "limit")
        #expect(ResyncReason.requested.rawValue == "requested")
        #expect(ResyncReason(rawValue: "requested") == .requested)
    }
}
