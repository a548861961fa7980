import Foundation
import NotifyBus
import Synchronization
import Testing

@Suite struct ConcurrencyTests {
    /// Several threads publish while another suspends and resumes: after the final
    /// resume every key's last value has arrived, no value twice, and the counts add up.
    @Test func concurrentPublishersWithSuspendResumeLoseNothingAndDuplicateNothing() {
        let bus = NotificationBus()
        let sub = bus.subscribe(limit: 10_000)
        let publishers = 4, keysPerPublisher = 8, eventsPerPublisher = 20_000
        let done = Atomic<Int>(0)
        let received = Mutex<[SubscriptionEvent]>([])
        var threads: [@Sendable () -> Void] = []
        for p in 0..<publishers {
            threads.append({
                for i in 0..<eventsPerPublisher {
                    bus.publish("p\(p)/k\(i % keysPerPublisher)", .integer(Int64(i)))
                }
                done.add(1, ordering: .releasing)
            })
        }
        threads.append({
            var suspended = false
            while done.load(ordering: .acquiring) < publishers {
                if suspended { sub.resume() } else { sub.suspend() }
                suspended.toggle()
                let events = sub.poll()
                received.withLock { $0 += events }
            }
        })
        let finished = DispatchGroup()
        for thread in threads {
            finished.enter()
            Thread.detachNewThread {
                thread()
                finished.leave()
            }
        }
        finished.wait()
        sub.resume()
        let all = received.withLock { $0 } + sub.poll()

        var lastValue: [String: Int64] = [:]
        var counted: [String: Int] = [:]
        var duplicates = 0
        for case .notification(let n) in all {
            guard case .integer(let v) = n.value else { continue }
            if let last = lastValue[n.key], v <= last { duplicates += 1 }
            lastValue[n.key] = v
            counted[n.key, default: 0] += n.coalesced
        }
        #expect(duplicates == 0)
        #expect(lastValue.count == publishers * keysPerPublisher)
        for p in 0..<publishers {
            for k in 0..<keysPerPublisher {
                let key = "p\(p)/k\(k)"
                let last = (eventsPerPublisher - 1) - ((eventsPerPublisher - 1 - k) % keysPerPublisher)
                #expect(lastValue[key] == Int64(last), "last value of \(key)")
                #expect(counted[key] == eventsPerPublisher / keysPerPublisher, "events counted for \(key)")
            }
        }
        // Every resumed mark's count matches the notifications after it.
        var expectedFlush = 0
        for event in all {
            switch event {
            case .resumed(_, let n):
                #expect(expectedFlush == 0)
                expectedFlush = n
            case .notification(let n) where n.kind == .flushed:
                expectedFlush -= 1
            default: break
            }
        }
        #expect(expectedFlush == 0)
    }

    @Test func asyncSequenceDeliversToAWaitingTask() async {
        let bus = NotificationBus()
        let sub = bus.subscribe(["orientation"])
        let consumer = Task {
            var seen: [JSONValue] = []
            for await n in sub.notifications {
                seen.append(n.value)
                if seen.count == 3 { break }
            }
            return seen
        }
        for value in ["portrait", "landscape-left", "portrait"] as [JSONValue] {
            try? await Task.sleep(for: .milliseconds(5))
            bus.publish("orientation", value)
        }
        #expect(await consumer.value == ["portrait", "landscape-left", "portrait"])
    }

    @Test func cancellingTheIteratingTaskEndsTheSequenceAndFreesTheSubscription() async {
        let bus = NotificationBus()
        let sub = bus.subscribe()
        let started = Mutex(false)
        let consumer = Task {
            var count = 0
            for await _ in sub {
                count += 1
                started.withLock { $0 = true }
            }
            return count
        }
        bus.publish("a", 1)
        while !started.withLock({ $0 }) { await Task.yield() }
        consumer.cancel()
        #expect(await consumer.value == 1)
        #expect(sub.isCancelled)
    }

    @Test func cancelFinishesAWaitingIterator() async {
        let bus = NotificationBus()
        let sub = bus.subscribe()
        let consumer = Task { () -> Int in
            var n = 0
            for await _ in sub { n += 1 }
            return n
        }
        try? await Task.sleep(for: .milliseconds(20))
        sub.cancel()
        #expect(await consumer.value == 0)
    }

    @Test func suspendedAsyncSubscriberGetsTheFlushOnResume() async {
        let bus = NotificationBus()
        let sub = bus.subscribe()
        sub.suspend()
        for i in 0..<50 { bus.publish("battery/BAT0/level", .number(Double(i) / 100)) }
        sub.resume()
        var iterator = sub.makeAsyncIterator()
        #expect(await iterator.next().map { if case .suspended = $0 { true } else { false } } == true)
        #expect(await iterator.next().map { if case .resumed(_, 1) = $0 { true } else { false } } == true)
        let flushed = await iterator.next()?.notification
        #expect(flushed?.coalesced == 50)
        #expect(flushed?.value == 0.49)
    }

    @Test func callbacksRunInOrderOnThePublishingThread() {
        let bus = NotificationBus(clock: .zero)
        let seen = Mutex<[SubscriptionEvent]>([])
        let sub = bus.subscribe(["a"], initial: .current) { event in seen.withLock { $0.append(event) } }
        bus.publish("a", 1)
        sub.suspend()
        bus.publish("a", 2)
        bus.publish("a", 3)
        sub.resume()
        let events = seen.withLock { $0 }
        #expect(events.count == 4)
        #expect(events[2] == .resumed(time: .zero, flushed: 1))
        #expect(events[3].notification?.coalesced == 2)
        withExtendedLifetime(sub) {}
    }

    @Test func droppingTheSubscriptionUnsubscribes() {
        let bus = NotificationBus()
        let calls = Atomic<Int>(0)
        do {
            let sub = bus.subscribe { _ in calls.add(1, ordering: .relaxed) }
            bus.publish("a", 1)
            withExtendedLifetime(sub) {}
        }
        bus.publish("a", 2)
        #expect(calls.load(ordering: .relaxed) == 1)
    }
}
