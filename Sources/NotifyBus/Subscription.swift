/// One subscriber: an `AsyncSequence` of its events, and the handle to suspend,
/// resume and cancel it.
///
/// A subscription is made by ``NotificationBus/subscribe(_:policy:limit:budget:initial:highWaterMark:name:at:)``.
/// While suspended, the events for its keys are held per its ``policy``; resuming
/// delivers a ``SubscriptionEvent/resumed(time:flushed:)`` mark and the flush. Cancelling it (or the task that
/// iterates it, or dropping the last reference) ends the sequence and frees
/// everything it held at once.
///
/// A subscription has one consumer: iterate it from one task, or use ``poll()``,
/// or give `subscribe` a handler; not several of these at once.
///
/// ```swift
/// let subscription = bus.subscribe(["battery/**"])
/// for await event in subscription {
///     if case .notification(let n) = event { print(n.key, n.value, n.coalesced) }
/// }
/// ```
public final class Subscription: AsyncSequence, Sendable {
    /// A subscription yields notifications and the lifecycle marks between them.
    public typealias Element = SubscriptionEvent
    /// Iterating a subscription never throws; it ends when the subscription is cancelled.
    public typealias Failure = Never

    let bus: NotificationBus
    let consumer: Consumer
    /// Identifies the subscription within its bus.
    public let id: Int
    /// The name given to `subscribe`, if any.
    public let name: String?
    /// The patterns of the keys it receives.
    public let patterns: [KeyPattern]
    /// What it receives for events held while suspended.
    public let policy: DeliveryPolicy
    /// The most entries it holds while suspended.
    public let limit: Int

    init(
        bus: NotificationBus, id: Int, name: String?, patterns: [KeyPattern], policy: DeliveryPolicy, limit: Int,
        consumer: Consumer
    ) {
        self.bus = bus
        self.id = id
        self.name = name
        self.patterns = patterns
        self.policy = policy
        self.limit = limit
        self.consumer = consumer
    }

    deinit { cancel() }

    /// Suspends it: from now on its events are held (or, under ``DeliveryPolicy/drop``, discarded).
    ///
    /// Its consumer receives a ``SubscriptionEvent/suspended(time:)`` mark.
    /// Suspending a suspended subscription does nothing.
    ///
    /// - Parameter time: the suspension's time; the bus clock's time when `nil`.
    public func suspend(at time: Duration? = nil) {
        change(at: time) { $0.suspend(id: id, time: $1) }
    }

    /// Suspends it, and holds the events that its consumer has not taken yet, as if they had been
    /// published while it was suspended: for a service that finds, when events are ready, that
    /// the subscriber cannot run, so that the event that reveals it is held rather than sent.
    ///
    /// The events waiting at the end of its outbox (the notifications after the last mark or batch
    /// of values; earlier items stay, to keep their order) go back into its hold in their order, a
    /// collapsed one with its count, and so does a slow subscriber's collapsed backlog, after them;
    /// then the ``SubscriptionEvent/suspended(time:)`` mark follows what stays. They count against
    /// `limit` and the budget as held events do (past them: a resync on resume); under
    /// ``DeliveryPolicy/drop`` they are discarded. The resume flushes them with the rest, counted.
    /// Suspending a suspended subscription does nothing.
    ///
    /// - Parameter time: the suspension's time; the bus clock's time when `nil`.
    package func suspendHoldingPending(at time: Duration? = nil) {
        change(at: time) { $0.suspend(id: id, time: $1, holdingPending: true) }
    }

    /// Resumes it: one ``SubscriptionEvent/resumed(time:flushed:)`` mark, then the held events per
    /// its policy, before any later event.
    ///
    /// The flushed notifications come in the order of each key's latest event, all at `time`.
    /// Resuming an active subscription does nothing.
    ///
    /// - Parameter time: the resume's time; the bus clock's time when `nil`.
    public func resume(at time: Duration? = nil) {
        change(at: time) { $0.resume(id: id, time: $1) }
    }

    /// Sends it every current value again: a ``SubscriptionEvent/resync(time:reason:)`` mark with
    /// reason ``ResyncReason/requested``, then the current value of every key it matches, in order
    /// of each key's latest event, of kind ``BusNotification/Kind/resync`` with `coalesced` 0 and
    /// ``BusNotification/previous`` as usual: every value, even under ``DeliveryPolicy/changed``.
    ///
    /// For a consumer that saw a gap in what it received. On an active subscription the values
    /// come now, after what is already waiting (a slow subscriber's collapsed backlog is replaced by
    /// them). On a suspended one nothing comes now: what it held is discarded, and its resume
    /// delivers the ``SubscriptionEvent/resumed(time:flushed:)`` mark, the `resync` mark and every
    /// current value (`flushed` counts them), at the resume's time.
    ///
    /// - Parameter time: the time of the values sent now; the bus clock's time when `nil`.
    public func resync(at time: Duration? = nil) {
        change(at: time) { $0.resync(id: id, time: $1) }
    }

    /// Ends it: the sequence finishes and what it held is freed.
    ///
    /// - Parameter time: the time recorded in the bus's journals; the bus clock's time when `nil`.
    public func cancel(at time: Duration? = nil) {
        change(at: time) { $0.remove(id: id, time: $1) }
    }

    /// Changes its state in the bus at `time` (the bus clock's time when `nil`), then wakes the
    /// consumers the change readies.
    private func change(at time: Duration?, _ body: (inout BusState, Duration) -> [Wakeup]) {
        let time = time ?? bus.clock.now()
        let wakes = bus.withState { body(&$0, time) }
        if !wakes.isEmpty { bus.perform(wakes) }
    }

    /// Whether it is suspended.
    public var isSuspended: Bool {
        bus.withState { $0.subscribers[id]?.isSuspended ?? false }
    }

    /// Whether it has been cancelled.
    public var isCancelled: Bool {
        bus.withState { $0.subscribers[id] == nil }
    }

    /// Every event ready now, without waiting (empty when none is, or once cancelled).
    public func poll() -> [SubscriptionEvent] {
        guard let items = bus.withState({ $0.take(id: id) }), !items.isEmpty else { return [] }
        return consumer.events(from: items)
    }

    /// Waits for the next batch of pending items; `nil` once the subscription has ended.
    func nextItems() async -> [PendingItem]? {
        if let ready = bus.withState({ state -> [PendingItem]?? in
            guard let core = state.subscribers[id] else { return .some(nil) }
            let items = state.take(core)
            return items.isEmpty ? .none : .some(items)
        }) {
            return ready
        }
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<[PendingItem]?, Never>) in
                let ready = bus.withState { state -> [PendingItem]?? in
                    guard let core = state.subscribers[id] else { return .some(nil) }
                    let items = state.take(core)
                    if !items.isEmpty { return .some(items) }
                    core.waiter = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            self.cancel()
        }
    }

    /// An iterator over its events; make one per subscription.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(subscription: self) }

    /// Iterates a subscription's events.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let subscription: Subscription
        var buffer: [SubscriptionEvent] = []
        var index = 0

        /// Waits for the next event; `nil` once the subscription is cancelled.
        ///
        /// Cancelling the task that waits cancels the subscription.
        public mutating func next() async -> SubscriptionEvent? {
            while index >= buffer.count {
                guard let items = await subscription.nextItems() else { return nil }
                buffer = subscription.consumer.events(from: items)
                index = 0
            }
            defer { index += 1 }
            return buffer[index]
        }
    }

    /// Only the notifications, without the lifecycle marks.
    public var notifications: Notifications { Notifications(subscription: self) }

    /// The notifications of a subscription, as an `AsyncSequence`.
    public struct Notifications: AsyncSequence, Sendable {
        /// Only notifications; the ``SubscriptionEvent`` marks are skipped.
        public typealias Element = BusNotification
        /// Iterating never throws; it ends when the subscription is cancelled.
        public typealias Failure = Never
        let subscription: Subscription

        /// An iterator over the notifications; it consumes the subscription's events.
        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: subscription.makeAsyncIterator()) }

        /// Iterates the notifications of a subscription.
        public struct AsyncIterator: AsyncIteratorProtocol {
            var base: Subscription.AsyncIterator
            /// Waits for the next notification; `nil` once the subscription is cancelled.
            public mutating func next() async -> BusNotification? {
                while let event = await base.next() {
                    if case .notification(let n) = event { return n }
                }
                return nil
            }
        }
    }
}
