import NotifyBus
import Synchronization
import Testing

/// Publishing several events at once (`publish(_:at:)`, `publishIfChanged(_:at:)`), and the bus clock.
@Suite struct BatchPublishTests {
    /// A clock that reads 1 s, 2 s, 3 s, … and counts its reads.
    final class CountingClock: Sendable {
        let reads = Mutex(0)
        var clock: BusClock {
            BusClock { .seconds(self.reads.withLock { $0 += 1; return $0 }) }
        }
    }

    @Test func batchIsTheSameAsPublishingEachEventAtOneTime() {
        let one = NotificationBus(clock: .zero)
        let batched = NotificationBus(clock: .zero)
        let subscriptions = [one, batched].map { bus in
            (bus.subscribe(), bus.subscribe(["battery/**"], policy: .changed), bus.subscribe(policy: .all))
        }
        for (_, b, c) in subscriptions { b.suspend(at: .s(1)); c.suspend(at: .s(1)) }
        let events: [(key: String, value: JSONValue)] = [
            ("battery/BAT0/state", "charging"), ("battery/BAT0/level", 0.5), ("orientation", "portrait"),
            ("battery/BAT0/state", "full"),
        ]
        for (key, value) in events { one.publish(key, value, at: .s(2)) }
        batched.publish(events, at: .s(2))
        one.publish("orientation", "landscape-left", at: .s(3))
        batched.publish([(key: "orientation", value: "landscape-left")], at: .s(3))
        for (_, b, c) in subscriptions { b.resume(at: .s(4)); c.resume(at: .s(4)) }
        let (a0, b0, c0) = subscriptions[0]
        let (a1, b1, c1) = subscriptions[1]
        let expected = a0.poll()
        #expect(expected.count == 5)
        #expect(a1.poll() == expected)
        #expect(b1.poll() == b0.poll())
        let all = c0.poll()
        #expect(all.compactMap(\.notification).count == 5)
        #expect(c1.poll() == all)
        #expect(batched.snapshot().map(\.key) == one.snapshot().map(\.key))
    }

    @Test func batchReadsTheClockOnceAndStampsEveryEventAlike() {
        let counting = CountingClock()
        let bus = NotificationBus(clock: counting.clock)
        let sub = bus.subscribe(at: .zero)
        bus.publish([(key: "a", value: 1), (key: "b", value: 2), (key: "a", value: 3)])
        #expect(counting.reads.withLock { $0 } == 1)
        let notes = sub.poll().compactMap(\.notification)
        #expect(notes.map(Note.init) == [Note("a", 1), Note("b", 2), Note("a", 3, previous: 1)])
        #expect(notes.allSatisfy { $0.time == .s(1) && $0.kind == .live })
        bus.publish([(key: String, value: JSONValue)]())
        #expect(counting.reads.withLock { $0 } == 1)
        #expect(sub.poll().isEmpty)
    }

    @Test func handleBatchPublishesThroughHandlesOfThisBusAndByKeyForOthers() {
        let bus = NotificationBus(clock: .zero)
        let other = NotificationBus(clock: .zero)
        let sub = bus.subscribe()
        sub.suspend(at: .s(1))
        let state = bus.handle(for: "battery/BAT0/state")
        let foreign = other.handle(for: "orientation")
        bus.publish([(handle: state, value: "charging"), (handle: foreign, value: "portrait"), (handle: state, value: "full")], at: .s(2))
        sub.resume(at: .s(3))
        #expect(sub.pollNotes() == [Note("orientation", "portrait"), Note("battery/BAT0/state", "full", 2)])
        #expect(other.value(forKey: "orientation") == nil)
        #expect(bus.value(forKey: "orientation") == "portrait")
    }

    @Test func publishIfChangedBatchSkipsEqualValuesIncludingEarlierOnesInTheBatch() {
        let bus = NotificationBus(clock: .zero)
        bus.publish("a", 1, at: .s(1))
        bus.publish("b", "x", at: .s(1))
        let sub = bus.subscribe(at: .s(1))
        let published = bus.publishIfChanged(
            [(key: "a", value: 1.0), (key: "b", value: "y"), (key: "c", value: true), (key: "c", value: true), (key: "b", value: "x")],
            at: .s(2))
        #expect(published == 3)
        #expect(sub.pollNotes() == [Note("b", "y"), Note("c", true), Note("b", "x", previous: "y")])
        #expect(bus.publishIfChanged([(key: "a", value: 1), (key: "b", value: "x")], at: .s(3)) == 0)
        #expect(sub.poll().isEmpty)
    }

    @Test func continuousClockStartsNearZeroAndAgreesWithContinuousClock() async throws {
        let start = ContinuousClock.now
        let clock = BusClock.continuous()
        let first = clock.now()
        #expect(first >= .zero && first < .milliseconds(100))
        try await Task.sleep(for: .milliseconds(30))
        let second = clock.now()
        let elapsed = ContinuousClock.now - start
        #expect(second >= first + .milliseconds(30))
        #expect(second <= elapsed)
        var last = second
        for _ in 0..<1000 {
            let now = clock.now()
            #expect(now >= last)
            last = now
        }
    }
}
