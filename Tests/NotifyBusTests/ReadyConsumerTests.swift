import NotifyBus
import Synchronization
import Testing

/// Counts the calls of a polling subscription's `onReady`.
final class ReadyCounter: Sendable {
    private let calls = Mutex(0)
    var count: Int { calls.withLock { $0 } }
    func call() { calls.withLock { $0 += 1 } }
}

extension NotificationBus {
    /// A polling subscription whose `onReady` calls are counted.
    func subscribeForPolling(
        _ patterns: [KeyPattern] = [.all], policy: DeliveryPolicy = .latest, limit: Int = NotificationBus.defaultLimit,
        budget: HoldBudget? = nil, initial: InitialDelivery = .none, counter: ReadyCounter
    ) -> Subscription {
        subscribeForPolling(
            patterns, policy: policy, limit: limit, budget: budget, initial: initial, name: nil, at: .zero,
            onReady: { counter.call() })
    }
}

/// A consumer that is told when events are ready and takes them with `poll()`.
@Suite struct ReadyConsumerTests {
    let bus = NotificationBus(clock: .zero)

    @Test func toldOnceUntilItPollsThenTakesEverythingAtOnce() {
        let ready = ReadyCounter()
        let sub = bus.subscribeForPolling(counter: ready)
        #expect(ready.count == 0)
        bus.publish("a", 1, at: .s(1))
        #expect(ready.count == 1)
        bus.publish("b", 2, at: .s(2))
        bus.publish("a", 3, at: .s(3))
        #expect(ready.count == 1)
        #expect(sub.pollNotes() == [Note("a", 1), Note("b", 2), Note("a", 3, previous: 1)])
        #expect(ready.count == 1)
        #expect(sub.poll().isEmpty)
        bus.publish("b", 4, at: .s(4))
        #expect(ready.count == 2)
        #expect(sub.pollNotes() == [Note("b", 4, previous: 2)])
    }

    @Test func lifecycleMarksAndInitialValuesMakeItReadyToo() {
        bus.publish("k", 1, at: .zero)
        let ready = ReadyCounter()
        let sub = bus.subscribeForPolling(initial: .current, counter: ready)
        #expect(ready.count == 1)
        #expect(sub.pollNotes() == [Note("k", 1, 0)])
        sub.suspend(at: .s(1))
        #expect(ready.count == 2)
        bus.publish("k", 2, at: .s(2))
        #expect(ready.count == 2)
        sub.resume(at: .s(3))
        #expect(ready.count == 2)
        let events = sub.poll()
        #expect(events.prefix(2) == [.suspended(time: .s(1)), .resumed(time: .s(3), flushed: 1)])
        #expect(events.dropFirst(2).compactMap(\.notification).map(Note.init) == [Note("k", 2, 1, previous: 1)])
        sub.cancel()
        bus.publish("k", 3, at: .s(4))
        #expect(ready.count == 2)
        #expect(sub.poll().isEmpty)
    }

    @Test func aResumeOfAPolledSuspensionMakesItReadyAgain() {
        let ready = ReadyCounter()
        let sub = bus.subscribeForPolling(counter: ready)
        sub.suspend(at: .s(1))
        #expect(sub.poll() == [.suspended(time: .s(1))])
        bus.publish("k", 1, at: .s(2))
        #expect(ready.count == 1)
        sub.resume(at: .s(3))
        #expect(ready.count == 2)
        #expect(sub.poll().first == .resumed(time: .s(3), flushed: 1))
    }

    @Test func aConsumerThatDoesNotPollCollapsesPastItsHighWaterMark() {
        let ready = ReadyCounter()
        let sub = bus.subscribeForPolling(counter: ready)
        for i in 0..<(NotificationBus.defaultHighWaterMark + 500) { bus.publish("k\(i % 3)", .integer(Int64(i)), at: .zero) }
        #expect(ready.count == 1)
        let notes = sub.poll().compactMap(\.notification)
        #expect(notes.count == NotificationBus.defaultHighWaterMark + 3)
        #expect(notes.suffix(3).allSatisfy { $0.kind == .collapsed })
    }
}
