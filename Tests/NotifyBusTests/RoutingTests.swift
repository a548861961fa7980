import NotifyBus
import Synchronization
import Testing

/// Routes from keys to subscribers: added per subscriber and per key, removed per subscriber, in
/// subscription order.
@Suite struct RoutingTests {
    static let keys = (0..<60).map { "device/sensor\($0 / 10)/reading\($0 % 10)" } + ["a", "a/b", "b", "c/d/e"]
    static let patternSets: [[String]] = [
        ["**"], ["device/*/reading1"], ["device/sensor2/**"], ["a/**", "b"], ["*"], ["**/reading5", "c/**"], ["nothing"],
        ["device/**/reading3", "device/sensor4/*", "a/b"],
    ]

    static func expectedKeys(_ patterns: [String]) -> [String] {
        keys.filter { key in patterns.contains { KeyPatternTests.reference($0, key) } }
    }

    @Test func aSubscribeAndCancelLoopLeavesNothingBehindAndRoutesStayRight() {
        let bus = NotificationBus(clock: .zero)
        // Half the keys exist before anyone subscribes; the rest appear during the loop.
        for key in Self.keys.prefix(32) { bus.publish(key, 0, at: .zero) }
        var rng = SeededRandom(seed: 3)
        let stayingPatterns = (0..<20).map { _ in Self.patternSets.randomElement(using: &rng)! }
        let staying = stayingPatterns.map { bus.subscribe($0.map { KeyPattern($0) }, at: .zero) }
        let subscribers = bus.subscriberCount
        let routes = bus.routeCount
        #expect(subscribers == 20)
        #expect(routes == stayingPatterns.reduce(0) { $0 + Self.expectedKeys($1).filter(Self.keys.prefix(32).contains).count })

        var passing: [Subscription] = []
        for round in 0..<4096 {
            let patterns = (0..<Int.random(in: 1...8, using: &rng)).flatMap { _ in Self.patternSets.randomElement(using: &rng)! }
            passing.append(bus.subscribe(patterns.map { KeyPattern($0) }, at: .zero))
            if round == 2000 {
                // The other keys appear while many subscriptions come and go.
                for key in Self.keys.dropFirst(32) { bus.publish(key, 0, at: .zero) }
            }
            // Cancel some, from anywhere in the list, not only the newest.
            while passing.count > Int.random(in: 0...40, using: &rng) {
                passing.remove(at: Int.random(in: 0..<passing.count, using: &rng)).cancel()
            }
        }
        for subscription in passing { subscription.cancel() }
        passing = []
        let routesWithEveryKey = stayingPatterns.reduce(0) { $0 + Self.expectedKeys($1).count }
        #expect(bus.subscriberCount == subscribers)
        #expect(bus.routeCount == routesWithEveryKey)

        for subscription in staying { _ = subscription.poll() }
        for (i, key) in Self.keys.enumerated() { bus.publish(key, .integer(Int64(i + 1)), at: .seconds(1)) }
        for (subscription, patterns) in zip(staying, stayingPatterns) {
            #expect(subscription.pollNotes().map(\.key) == Self.expectedKeys(patterns), "\(patterns)")
        }
    }

    @Test func countsReturnToWhereTheyWereAfterEachSubscription() {
        let bus = NotificationBus(clock: .zero)
        for key in Self.keys { bus.publish(key, 0, at: .zero) }
        for patterns in Self.patternSets {
            let sub = bus.subscribe(patterns.map { KeyPattern($0) }, at: .zero)
            #expect(bus.subscriberCount == 1)
            #expect(bus.routeCount == Self.expectedKeys(patterns).count, "\(patterns)")
            sub.cancel()
            #expect(bus.subscriberCount == 0)
            #expect(bus.routeCount == 0)
        }
    }

    final class Log: Sendable {
        let names = Mutex<[String]>([])
    }

    /// Callback subscribers run in route order: a removal keeps the order of the rest, and a new
    /// subscriber comes after them, for keys old and new.
    @Test func routesStayInSubscriptionOrder() {
        let bus = NotificationBus(clock: .zero)
        bus.publish("old", 0, at: .zero)
        let log = Log()
        var subs: [String: Subscription] = [:]
        for name in ["a", "b", "c", "d"] {
            subs[name] = bus.subscribe(at: .zero) { event in
                if event.notification != nil { log.names.withLock { $0.append(name) } }
            }
        }
        subs["b"]?.cancel()
        subs["e"] = bus.subscribe(at: .zero) { event in
            if event.notification != nil { log.names.withLock { $0.append("e") } }
        }
        subs["a"]?.cancel()
        bus.publish("old", 1, at: .zero)
        bus.publish("new", 1, at: .zero)
        #expect(log.names.withLock { $0 } == ["c", "d", "e", "c", "d", "e"])
        #expect(bus.routeCount == 6)
        withExtendedLifetime(subs) {}
    }

    @Test func aKeyCreatedByAHandleIsRoutedBeforeItHasAValue() {
        let bus = NotificationBus(clock: .zero)
        let sub = bus.subscribe(["k/*"], initial: .current, at: .zero)
        let handle = bus.handle(for: "k/x")
        #expect(bus.routeCount == 1)
        #expect(sub.poll().isEmpty)
        let late = bus.subscribe(["k/*"], initial: .current, at: .zero)
        #expect(late.poll().isEmpty)
        bus.publish(handle, 1, at: .zero)
        #expect(sub.pollNotes() == [Note("k/x", 1)])
        #expect(late.pollNotes() == [Note("k/x", 1)])
    }
}
