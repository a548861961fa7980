import Synchronization

/// The consumer side of one subscription: turns pending items into events.
///
/// It keeps what the subscriber last received per key, so `previous` and the
/// `changed` filter are decided in delivery order, outside the bus lock.
final class Consumer: Sendable {
    /// A callback subscriber's handler, given everything taken from the outbox at once.
    let handler: (@Sendable ([SubscriptionEvent]) -> Void)?
    /// A polling subscriber's signal: called when its outbox gets something after it was empty or
    /// taken, and not again until the consumer takes it with `poll()`.
    let onReady: (@Sendable () -> Void)?
    private let materializer: Mutex<Materializer>

    init(
        policy: DeliveryPolicy, handler: (@Sendable ([SubscriptionEvent]) -> Void)?,
        onReady: (@Sendable () -> Void)? = nil
    ) {
        self.handler = handler
        self.onReady = onReady
        self.materializer = Mutex(Materializer(policy: policy))
    }

    func events(from items: consuming [PendingItem]) -> [SubscriptionEvent] {
        materializer.withLock { $0.events(from: &items) }
    }
}

struct Materializer {
    let policy: DeliveryPolicy
    /// The value last received per key: `lastReceived[slotOfKey[keyID]]`, a slot table indexed by
    /// key ID as in `Hold` (-1: none yet), so a lookup is two array accesses and no hashing.
    private var slotOfKey: [Int32] = []
    private var lastReceived: [JSONValue] = []

    init(policy: DeliveryPolicy) { self.policy = policy }

    mutating func events(from items: inout [PendingItem]) -> [SubscriptionEvent] {
        var out: [SubscriptionEvent] = []
        out.reserveCapacity(items.reduce(0) { $0 + $1.eventCapacity })
        for k in items.indices {
            // The entries leave the item first, so this is their only owner and their keys move
            // into the notifications.
            var entries = items[k].takeEntries()
            switch items[k] {
            case .events:
                for i in entries.indices {
                    deliver(&entries, i, coalesced: 1, time: entries[i].last, kind: .live, into: &out)
                }
            case .suspended(let time):
                out.append(.suspended(time: time))
            case .flush(let time, _, let ordered):
                let mark = out.count
                out.append(.resumed(time: time, flushed: 0))
                if !ordered { Self.sortByEvent(&entries) }
                var flushed = 0
                for i in entries.indices
                where deliver(&entries, i, coalesced: entries[i].count, time: time, kind: .flushed, into: &out) {
                    flushed += 1
                }
                out[mark] = .resumed(time: time, flushed: flushed)
            case .resync(let time, _, let afterResume, let reason):
                let mark = out.count
                if afterResume { out.append(.resumed(time: time, flushed: 0)) }
                out.append(.resync(time: time, reason: reason))
                // Asked for: every value, whatever the policy.
                let filters = reason != .requested
                var flushed = 0
                for i in entries.indices
                where deliver(&entries, i, coalesced: 0, time: time, kind: .resync, filters: filters, into: &out) {
                    flushed += 1
                }
                if afterResume { out[mark] = .resumed(time: time, flushed: flushed) }
            case .initial(let time, _):
                for i in entries.indices { deliver(&entries, i, coalesced: 0, time: time, kind: .initial, into: &out) }
            case .collapsed(_, let ordered):
                if !ordered { Self.sortByEvent(&entries) }
                for i in entries.indices {
                    deliver(&entries, i, coalesced: entries[i].count, time: entries[i].last, kind: .collapsed, into: &out)
                }
            }
        }
        return out
    }

    /// Puts `entries` in event order (by `seq`), in place.
    ///
    /// They are often in order already (each key published once), which costs one pass. Sorting
    /// in place moves the entries without copying them (a copy retains a key and a value).
    private static func sortByEvent(_ entries: inout [HeldEntry]) {
        for i in entries.indices.dropFirst() where entries[i - 1].seq > entries[i].seq {
            entries.sort { $0.seq < $1.seq }
            return
        }
    }

    /// Appends a notification for `entries[i]` unless `changed` filters it (where `filters`); returns
    /// whether it did.
    ///
    /// It takes the collection and an index rather than the entry, and reads the entry's fields
    /// only where they are stored, after every change to `self`: given the entry itself, the
    /// compiler copies all of it first (a retain and a release of its key and value per entry).
    /// The key and the value move out of the entry into the notification; the entry is not read again.
    @discardableResult
    private mutating func deliver<Entries: MutableCollection & RandomAccessCollection<HeldEntry>>(
        _ entries: inout Entries, _ i: Entries.Index, coalesced: Int, time: Duration, kind: BusNotification.Kind,
        filters: Bool = true, into out: inout [SubscriptionEvent]
    ) -> Bool {
        let index = Int(entries[i].keyID)
        if index >= slotOfKey.count {
            slotOfKey.append(contentsOf: repeatElement(-1, count: index + 1 - slotOfKey.count))
        }
        let slot = Int(slotOfKey[index])
        // Not `nil`: JSONValue is ExpressibleByNilLiteral, and a bare `nil` here would be JSON null.
        let previous: JSONValue?
        if slot >= 0 {
            if filters, policy == .changed, lastReceived[slot] == entries[i].value { return false }
            // The table keeps a copy of the new value; the old one moves out into `previous`.
            var last = entries[i].value
            swap(&last, &lastReceived[slot])
            previous = .some(last)
        } else {
            slotOfKey[index] = Int32(lastReceived.count)
            lastReceived.append(entries[i].value)
            previous = .none
        }
        out.append(.notification(BusNotification(
            key: entries[i].takeKey(), value: entries[i].takeValue(), previous: previous, coalesced: coalesced,
            firstEventTime: entries[i].first, lastEventTime: entries[i].last, time: time, kind: kind)))
        return true
    }
}

extension PendingItem {
    /// How many events it can turn into (at most), to reserve room for them.
    var eventCapacity: Int {
        switch self {
        case .events(let entries): entries.count
        case .suspended: 1
        case .flush(_, let entries, _): entries.count + 1
        case .resync(_, let entries, _, _): entries.count + 2
        case .initial(_, let entries): entries.count
        case .collapsed(let entries, _): entries.count
        }
    }
}
