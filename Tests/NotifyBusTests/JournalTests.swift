import Foundation
import NotifyBus
import Synchronization
import Testing

@Suite struct JournalTests {
    @Test func journalSeesPublishesAndLifecycleInBusOrder() {
        let bus = NotificationBus(clock: .zero)
        let entries = Mutex<[JournalEntry]>([])
        let journal = bus.journal { entry in entries.withLock { $0.append(entry) } }
        bus.publish("a", 1, at: .s(1))
        let sub = bus.subscribe(["a"], policy: .changed, limit: 7, initial: .current, name: "app", at: .s(2))
        sub.suspend(at: .s(3))
        sub.suspend(at: .s(4))  // no change: no entry
        bus.publish("a", 2, at: .s(5))
        sub.resume(at: .s(6))
        sub.cancel(at: .s(7))
        journal.cancel()
        bus.publish("a", 3, at: .s(8))
        #expect(entries.withLock { $0 } == [
            .event(key: "a", value: 1, time: .s(1)),
            .subscribed(id: sub.id, name: "app", patterns: ["a"], policy: .changed, limit: 7, initial: .current, time: .s(2)),
            .suspended(id: sub.id, time: .s(3)),
            .event(key: "a", value: 2, time: .s(5)),
            .resumed(id: sub.id, time: .s(6)),
            .unsubscribed(id: sub.id, time: .s(7)),
        ])
    }

    @Test func journalKeepsEveryEventFromConcurrentPublishers() {
        let bus = NotificationBus()
        let count = Atomic<Int>(0)
        let journal = bus.journal { _ in count.add(1, ordering: .relaxed) }
        DispatchQueue.concurrentPerform(iterations: 4) { p in
            for i in 0..<5_000 { bus.publish("k\(p)", .integer(Int64(i))) }
        }
        #expect(count.load(ordering: .relaxed) == 20_000)
        withExtendedLifetime(journal) {}
    }
}
