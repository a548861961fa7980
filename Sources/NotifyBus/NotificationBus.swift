import Synchronization

/// A bus of keyed events that holds them, coalesced per key, for suspended subscribers.
///
/// Publishing is a synchronous call under one lock, from any thread: it
/// updates the store (the latest value per key) and hands the event to every
/// subscriber whose patterns match. Consumers are woken after the lock is
/// released. Suspend and resume happen under the same lock, so a resume is
/// atomic against concurrent publishers: each event lands either in the
/// flush or after it, never lost and never twice.
///
/// <doc:GettingStarted> builds an app around it; <doc:DeliverySemantics> says
/// exactly what each subscriber receives.
///
/// ```swift
/// let bus = NotificationBus()
/// let subscription = bus.subscribe(["battery/**"])
/// subscription.suspend()
/// bus.publish("battery/BAT0/state", "charging")
/// bus.publish("battery/BAT0/state", "full")
/// subscription.resume()   // one notification: "full", coalesced 2
/// ```
public final class NotificationBus: Sendable {
    /// The default number of entries a suspended subscriber may hold (the `limit` of `subscribe`).
    public static let defaultLimit = 1024
    /// The default backlog length past which an active subscriber's pending events collapse per key.
    public static let defaultHighWaterMark = 1024

    let state = Mutex(BusState())
    /// The clock that stamps events and lifecycle changes given no explicit time.
    public let clock: BusClock

    /// Creates an empty bus.
    public init(clock: BusClock = .continuous()) {
        self.clock = clock
    }

    // MARK: Publishing

    /// Publishes `value` for `key`: the store keeps it, and every matching subscriber gets it.
    public func publish(_ key: String, _ value: JSONValue, at time: Duration? = nil) {
        let time = time ?? clock.now()
        let wakes = withState { state in
            state.publish(keyID: state.keyID(for: key), value: value, time: time)
        }
        if !wakes.isEmpty { perform(wakes) }
    }

    /// Publishes through a handle, skipping the key lookup.
    ///
    /// A handle made by another bus publishes by its key, as ``publish(_:_:at:)-(String,_,_)`` does.
    public func publish(_ handle: KeyHandle, _ value: JSONValue, at time: Duration? = nil) {
        guard handle.bus == ObjectIdentifier(self) else {
            publish(handle.key, value, at: time)
            return
        }
        let time = time ?? clock.now()
        let wakes = withState { $0.publish(keyID: handle.id, value: value, time: time) }
        if !wakes.isEmpty { perform(wakes) }
    }

    /// Publishes `value` for `key` only when it differs from the stored value.
    ///
    /// Sources use this after re-reading their state, so a gap costs nothing but the re-read.
    /// - Returns: whether it was published.
    @discardableResult
    public func publishIfChanged(_ key: String, _ value: JSONValue, at time: Duration? = nil) -> Bool {
        let time = time ?? clock.now()
        let (published, wakes) = withState { state -> (Bool, [Wakeup]) in
            let id = state.keyID(for: key)
            if state.keys[Int(id)].value == value { return (false, []) }
            return (true, state.publish(keyID: id, value: value, time: time))
        }
        if !wakes.isEmpty { perform(wakes) }
        return published
    }

    /// A handle for `key`, to publish it repeatedly without looking it up each time.
    public func handle(for key: String) -> KeyHandle {
        let id = withState { $0.keyID(for: key) }
        return KeyHandle(key: key, id: id, bus: ObjectIdentifier(self))
    }

    // MARK: The store

    /// The latest value published for `key`, or `nil` if none was.
    public func value(forKey key: String) -> JSONValue? {
        withState { state in
            state.keyIDs.id(of: key).flatMap { state.keys[Int($0)].value }
        }
    }

    /// The latest value of every key matching `patterns`, in order of each key's latest event.
    public func snapshot(matching patterns: [KeyPattern] = [.all]) -> [(key: String, value: JSONValue)] {
        withState { $0.snapshot(matching: patterns) }.map { ($0.key, $0.value) }
    }

    /// How many subscriptions the bus has now.
    package var subscriberCount: Int { withState { $0.subscribers.count } }

    /// How many routes the bus keeps: one per key per subscription whose patterns match it.
    package var routeCount: Int { withState { $0.routeCount } }

    // MARK: Subscribing

    /// Subscribes to the keys matching any of `patterns`; iterate the result to receive events.
    ///
    /// Keep the returned ``Subscription``: dropping its last reference cancels it.
    ///
    /// - Parameters:
    ///   - patterns: which keys; the default matches all.
    ///   - policy: what a suspended subscriber receives on resume.
    ///   - limit: the most entries it holds while suspended (distinct keys; events under ``DeliveryPolicy/all``).
    ///     One more discards them, and on resume it gets ``SubscriptionEvent/resync(time:reason:)`` and
    ///     every current value.
    ///   - budget: a bound shared with other subscriptions: one more entry past it (or past one of its
    ///     ancestors) does the same as one past `limit`. `nil`: only `limit` bounds it.
    ///   - initial: ``InitialDelivery/current`` delivers the current value of every matching key first.
    ///   - highWaterMark: the backlog length past which an active subscriber that does not keep
    ///     up has its pending events collapsed per key (bounded by `limit`, like a suspension).
    ///   - name: a name for logs and journals (`BusRecorder` records only named subscriptions).
    ///   - time: the subscribe time, for `initial` values; the clock's time when `nil`.
    public func subscribe(
        _ patterns: [KeyPattern] = [.all],
        policy: DeliveryPolicy = .latest,
        limit: Int = NotificationBus.defaultLimit,
        budget: HoldBudget? = nil,
        initial: InitialDelivery = .none,
        highWaterMark: Int = NotificationBus.defaultHighWaterMark,
        name: String? = nil,
        at time: Duration? = nil
    ) -> Subscription {
        makeSubscription(patterns, policy, limit, budget, initial, highWaterMark, name, time, handler: nil)
    }

    /// Subscribes with a callback instead of an `AsyncSequence`.
    ///
    /// `handler` runs in event order, one call at a time, on the thread whose
    /// publish (or suspend, resume, subscribe) produced the event; keep it short.
    /// Keep the returned subscription: dropping it cancels the subscription.
    ///
    /// - Parameters:
    ///   - patterns: which keys; the default matches all.
    ///   - policy: what a suspended subscriber receives on resume.
    ///   - limit: the most entries it holds while suspended, as for the sequence form.
    ///   - budget: a bound shared with other subscriptions, as for the sequence form.
    ///   - initial: ``InitialDelivery/current`` delivers the current value of every matching key first.
    ///   - highWaterMark: the backlog length past which its pending events are collapsed per key.
    ///   - name: a name for logs and journals.
    ///   - time: the subscribe time, for `initial` values; the clock's time when `nil`.
    ///   - handler: called with each event.
    public func subscribe(
        _ patterns: [KeyPattern] = [.all],
        policy: DeliveryPolicy = .latest,
        limit: Int = NotificationBus.defaultLimit,
        budget: HoldBudget? = nil,
        initial: InitialDelivery = .none,
        highWaterMark: Int = NotificationBus.defaultHighWaterMark,
        name: String? = nil,
        at time: Duration? = nil,
        handler: @escaping @Sendable (SubscriptionEvent) -> Void
    ) -> Subscription {
        makeSubscription(patterns, policy, limit, budget, initial, highWaterMark, name, time) { events in
            for event in events { handler(event) }
        }
    }

    /// Subscribes with a callback that gets the events in batches: each call carries everything
    /// that was ready at once, so a resume's `resumed` mark and its whole flush (or every
    /// initial value) arrive in one call. Otherwise as `subscribe(_:policy:limit:budget:initial:highWaterMark:name:at:handler:)`.
    package func subscribeInBatches(
        _ patterns: [KeyPattern], policy: DeliveryPolicy, limit: Int, budget: HoldBudget?, initial: InitialDelivery,
        name: String?, at time: Duration? = nil, batchHandler: @escaping @Sendable ([SubscriptionEvent]) -> Void
    ) -> Subscription {
        makeSubscription(
            patterns, policy, limit, budget, initial, NotificationBus.defaultHighWaterMark, name, time, handler: batchHandler)
    }

    /// Subscribes a consumer that is told when events are ready and takes them itself with
    /// ``Subscription/poll()``, for a service whose event loop decides when to take them (after
    /// checking that the subscriber can run, say).
    ///
    /// `onReady` is called, after the bus lock is released, when the subscription's outbox gets
    /// something after being empty or taken, and not again until `poll()` takes it: events
    /// published in between wait, and one `poll()` takes them all. It runs on the thread whose
    /// publish (or suspend, resume, subscribe) made the events ready, possibly before this call
    /// returns (for `initial` values); keep it short (a service wakes its event loop). Otherwise as
    /// `subscribe(_:policy:limit:budget:initial:highWaterMark:name:at:)`.
    package func subscribeForPolling(
        _ patterns: [KeyPattern], policy: DeliveryPolicy, limit: Int, budget: HoldBudget?, initial: InitialDelivery,
        name: String?, at time: Duration? = nil, onReady: @escaping @Sendable () -> Void
    ) -> Subscription {
        makeSubscription(
            patterns, policy, limit, budget, initial, NotificationBus.defaultHighWaterMark, name, time, handler: nil,
            onReady: onReady)
    }

    private func makeSubscription(
        _ patterns: [KeyPattern], _ policy: DeliveryPolicy, _ limit: Int, _ budget: HoldBudget?, _ initial: InitialDelivery,
        _ highWaterMark: Int, _ name: String?, _ time: Duration?,
        handler: (@Sendable ([SubscriptionEvent]) -> Void)?, onReady: (@Sendable () -> Void)? = nil
    ) -> Subscription {
        let time = time ?? clock.now()
        let consumer = Consumer(policy: policy, handler: handler, onReady: onReady)
        // A budget made by another bus is ignored.
        let budgetID = budget.flatMap { $0.bus === self ? $0.id : nil }
        let (id, wakes) = withState { state -> (Int, [Wakeup]) in
            let id = state.nextSubscriberID
            state.nextSubscriberID += 1
            let core = SubscriberCore(
                id: id, name: name, patterns: patterns, policy: policy, limit: limit,
                budget: budgetID.flatMap { state.budgets[$0] }, highWaterMark: highWaterMark, consumer: consumer)
            return (id, state.add(core, initial: initial, time: time))
        }
        let subscription = Subscription(
            bus: self, id: id, name: name, patterns: patterns, policy: policy, limit: max(0, limit),
            consumer: consumer)
        if !wakes.isEmpty { perform(wakes) }
        return subscription
    }

    // MARK: Waking consumers

    func perform(_ wakes: [Wakeup]) {
        for wake in wakes {
            switch wake {
            case .resume(let continuation, let items):
                continuation.resume(returning: items)
            case .drain(let id, let consumer):
                drain(id: id, consumer: consumer)
            case .ready(let onReady):
                onReady()
            case .drainJournal(let id, let handler):
                drainJournal(id: id, handler: handler)
            }
        }
    }

    /// Runs a callback subscriber's handler until its outbox is empty.
    private func drain(id: Int, consumer: Consumer) {
        guard let handler = consumer.handler else { return }
        while true {
            let items = withState { state -> [PendingItem]? in
                guard let core = state.subscribers[id] else { return nil }
                let items = state.take(core)
                if items.isEmpty { core.callbackPending = false; return nil }
                return items
            }
            guard let items else { return }
            handler(consumer.events(from: items))
        }
    }
}

/// A key looked up once, to publish it without a lookup.
///
/// Made by ``NotificationBus/handle(for:)``; publish with ``NotificationBus/publish(_:_:at:)-(KeyHandle,_,_)``.
public struct KeyHandle: Sendable, Hashable {
    /// The key.
    public let key: String
    let id: Int32
    let bus: ObjectIdentifier
}
