/// The producer side of one subscription. Lives inside `BusState` and is only
/// touched while the bus lock is held.
final class SubscriberCore {
    let id: Int
    let name: String?
    let patterns: [KeyPattern]
    let policy: DeliveryPolicy
    let highWaterMark: Int
    let consumer: Consumer

    /// A callback subscriber (its consumer has a handler).
    let hasHandler: Bool

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
    /// A callback drain is under way; events only need enqueueing.
    @exclusivity(unchecked) var isDraining = false

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
        self.hasHandler = consumer.handler != nil
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

    /// Hands the outbox to a waiting consumer, or starts a callback drain.
    ///
    /// Only a pointer and two flags are tested on the way of every event; the rest is out of line.
    @inline(__always)
    func wake(_ wakes: inout [Wakeup]) {
        if let waiter {
            self.waiter = nil
            resume(waiter, &wakes)
        } else if hasHandler && !isDraining {
            startDrain(&wakes)
        }
    }

    @inline(never)
    private func resume(_ waiter: UnsafeContinuation<[PendingItem]?, Never>, _ wakes: inout [Wakeup]) {
        wakes.append(.resume(waiter, outbox.take()))
    }

    @inline(never)
    private func startDrain(_ wakes: inout [Wakeup]) {
        isDraining = true
        wakes.append(.drain(id, consumer))
    }
}

/// Work to do once the bus lock is released.
enum Wakeup: Sendable {
    /// Resume a waiting consumer with these items (`nil`: the subscription ended).
    case resume(UnsafeContinuation<[PendingItem]?, Never>, [PendingItem]?)
    /// Run the callback of subscriber `id` until its outbox is empty.
    case drain(Int, Consumer)
    /// Run the handler of journal `id` until its outbox is empty.
    case drainJournal(Int, @Sendable (JournalEntry) -> Void)
}
