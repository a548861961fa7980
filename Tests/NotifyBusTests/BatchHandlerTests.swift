import NotifyBus
import Synchronization
import Testing

@Suite("Callback subscribers in batches")
struct BatchHandlerTests {
    final class Calls: Sendable {
        let batches = Mutex<[[SubscriptionEvent]]>([])
    }

    @Test func aResumeAndItsFlushArriveInOneCall() {
        let bus = NotificationBus()
        let calls = Calls()
        let subscription = bus.subscribeInBatches(
            ["a", "b"], policy: .latest, limit: 1024, budget: nil, initial: .none, name: nil, at: .zero
        ) { events in
            calls.batches.withLock { $0.append(events) }
        }
        bus.publish("a", 1, at: .seconds(1))
        subscription.suspend(at: .seconds(2))
        bus.publish("a", 2, at: .seconds(3))
        bus.publish("b", 3, at: .seconds(4))
        bus.publish("a", 4, at: .seconds(5))
        subscription.resume(at: .seconds(6))
        let batches = calls.batches.withLock { $0 }
        #expect(batches.count == 3)
        #expect(batches[0].count == 1)
        #expect(batches[1] == [.suspended(time: .seconds(2))])
        let flush = batches[2]
        #expect(flush.count == 3)
        #expect(flush[0] == .resumed(time: .seconds(6), flushed: 2))
        #expect(flush.dropFirst().compactMap(\.notification).map(\.key) == ["b", "a"])
        #expect(flush.last?.notification?.coalesced == 2)
        withExtendedLifetime(subscription) {}
    }

    @Test func initialValuesArriveInOneCall() {
        let bus = NotificationBus()
        for key in ["x", "y", "z"] { bus.publish(key, .string(key), at: .zero) }
        let calls = Calls()
        let subscription = bus.subscribeInBatches(
            [.all], policy: .latest, limit: 1024, budget: nil, initial: .current, name: nil, at: .seconds(1)
        ) { events in
            calls.batches.withLock { $0.append(events) }
        }
        let batches = calls.batches.withLock { $0 }
        #expect(batches.count == 1)
        #expect(batches.first?.compactMap(\.notification).map(\.key) == ["x", "y", "z"])
        withExtendedLifetime(subscription) {}
    }
}
