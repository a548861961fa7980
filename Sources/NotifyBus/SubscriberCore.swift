/// The producer side of one subscription. Lives inside `BusState` and is only
/// touched while the bus lock is held.
final class SubscriberCore {
    let id: Int
    let name: String?
    let patterns: [KeyPattern]
    let policy: DeliveryPolicy
    let highWaterMark: Int
    let consumer: Consumer

    /// A callback subscriber: its consumer has a handler, or is told when events are ready.
    let hasCallback: Bool
    /// Its consumer is told when events are ready, and takes them itself.
    let notifiesReady: Bool

    // Only ever touched under the bus lock, which already makes every access exclusive: the
    // run-time exclusivity check (swift_beginAccess) on each publish would only add cost.
    @exclusivity(unchecked) var isSuspended = false
    /// The outbox passed the high-water mark: new events collapse into `hold` until the consumer catches up.
    @exclusivity(unchecked) var isCongested = false
    @exclusivity(unchecked) var hold: Hold
    @exclusivity(unchecked) var outbox = Outbox()
    /// The consumer task waiting for items, if any.
    ///
    /// An unsafe continuation (a pointer, laid out at compile time) rather than a checked one (laid
    /// out at run time, so every publish that tests it pays metadata lookups). It is resumed exactly
    /// once: it is only set and taken under the bus lock, and taking it clears it.
    @exclusivity(unchecked) var waiter: UnsafeContinuation<[PendingItem]?, Never>?
    /// The IDs of the keys routed to it (whose patterns match), so that removing it leaves exactly their routes.
    @exclusivity(unchecked) var routedKeys: [Int32] = []
    /// The callback has been called and its consumer has not taken everything yet (a handler's
    /// drain is under way, or a polling consumer was told and has not polled): events only need enqueueing.
    @exclusivity(unchecked) var callbackPending = false

    init(
        id: Int, name: String?, patterns: [KeyPattern], policy: DeliveryPolicy, limit: Int, budget: BudgetCore?,
        highWaterMark: Int, consumer: Consumer
    ) {
        self.id = id
        self.name = name
        self.patterns = patterns
        self.policy = policy
        self.highWaterMark = max(1, highWaterMark)
        self.consumer = consumer
        self.hasCallback = consumer.handler != nil || consumer.onReady != nil
        self.notifiesReady = consumer.onReady != nil
        self.hold = Hold(coalesces: policy != .all, limit: max(0, limit), budget: budget)
    }

    /// One published event for a key this subscriber matches.
    ///
    /// `key` is only called when the event needs an entry of its own, so updating a key already
    /// held copies no string.
    @inline(__always)
    func receive(
        keyID: Int32, key: () -> String, value: JSONValue, seq: UInt64, time: Duration, keyCount: Int,
        wakes: inout [Wakeup]
    ) {
        if isSuspended {
            if policy == .drop { return }
            hold.add(keyID: keyID, key: key, value: value, seq: seq, time: time, keyCount: keyCount)
        } else if isCongested {
            hold.add(keyID: keyID, key: key, value: value, seq: seq, time: time, keyCount: keyCount)
        } else {
            outbox.appendLive(HeldEntry(keyID: keyID, key: key(), value: value, count: 1, first: time, last: time, seq: seq))
            if outbox.count >= highWaterMark { isCongested = true }
            wake(&wakes)
        }
    }

    /// Hands the outbox to a waiting consumer, starts a callback drain, or tells a polling consumer.
    ///
    /// Only a pointer and two flags are tested on the way of every event; the rest is out of line.
    @inline(__always)
    func wake(_ wakes: inout [Wakeup]) {
        if let waiter {
            self.waiter = nil
            resume(waiter, &wakes)
        } else if hasCallback && !callbackPending {
            callBack(&wakes)
        }
    }

    @inline(never)
    private func resume(_ waiter: UnsafeContinuation<[PendingItem]?, Never>, _ wakes: inout [Wakeup]) {
        wakes.append(.resume(waiter, outbox.take()))
    }

    @inline(never)
    private func callBack(_ wakes: inout [Wakeup]) {
        callbackPending = true
        if let onReady = consumer.onReady {
            wakes.append(.ready(onReady))
        } else {
            wakes.append(.drain(id, consumer))
        }
    }
}

/// Work to do once the bus lock is released.
enum Wakeup: Sendable {
    /// Resume a waiting consumer with these items (`nil`: the subscription ended).
    case resume(UnsafeContinuation<[PendingItem]?, Never>, [PendingItem]?)
    /// Run the callback of subscriber `id` until its outbox is empty.
    case drain(Int, Consumer)
    /// Tell a polling consumer that events are ready.
    case ready(@Sendable () -> Void)
    /// Run the handler of journal `id` until its outbox is empty.
    case drainJournal(Int, @Sendable (JournalEntry) -> Void)
}
