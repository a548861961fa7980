import Synchronization

/// The consumer side of one subscription: turns pending items into events.
///
/// It keeps what the subscriber last received per key, so `previous` and the
/// `changed` filter are decided in delivery order, outside the bus lock.
final class Consumer: Sendable {
    /// A callback subscriber's handler, given everything taken from the outbox at once.
    let handler: (@Sendable ([SubscriptionEvent]) -> Void)?
    private let materializer: Mutex<Materializer>

    init(policy: DeliveryPolicy, handler: (@Sendable ([SubscriptionEvent]) -> Void)?) {
        self.handler = handler
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
                deliver(&entries, count: .one, time: nil, kind: .live, into: &out)
            case .suspended(let time):
                out.append(.suspended(time: time))
            case .flush(let time, _, let ordered):
                let mark = out.count
                out.append(.resumed(time: time, flushed: 0))
                if !ordered { Self.sortByEvent(&entries) }
                let flushed = deliver(&entries, count: .held, time: time, kind: .flushed, into: &out)
                out[mark] = .resumed(time: time, flushed: flushed)
            case .resync(let time, _, let afterResume):
                let mark = out.count
                if afterResume { out.append(.resumed(time: time, flushed: 0)) }
                out.append(.resync(time: time, reason: .limit))
                let flushed = deliver(&entries, count: .none, time: time, kind: .resync, into: &out)
                if afterResume { out[mark] = .resumed(time: time, flushed: flushed) }
            case .initial(let time, _):
                deliver(&entries, count: .none, time: time, kind: .initial, into: &out)
            case .collapsed(_, let ordered):
                if !ordered { Self.sortByEvent(&entries) }
                deliver(&entries, count: .held, time: nil, kind: .collapsed, into: &out)
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

    /// What a delivered notification's `coalesced` says.
    enum CoalescedCount {
        /// 1: a live event.
        case one
        /// The entry's count: a flush or a collapsed backlog.
        case held
        /// 0: a current value, not an event.
        case none
    }

    /// Appends a notification for each of `entries` that `changed` does not filter, in order, and
    /// returns how many it appended. `time` is the notifications' time; `nil`: each entry's last event's.
    ///
    /// The key and the value move out of each entry into its notification (the entries are not
    /// read again). The slot table and the entries are walked through buffer pointers, so each
    /// entry costs no uniqueness or bounds check of them; the slot table grows first, to the
    /// largest key ID among the entries.
    @discardableResult
    private mutating func deliver(
        _ entries: inout [HeldEntry], count: CoalescedCount, time: Duration?, kind: BusNotification.Kind,
        into out: inout [SubscriptionEvent]
    ) -> Int {
        guard !entries.isEmpty else { return 0 }
        var largestKeyID: Int32 = 0
        for i in entries.indices where entries[i].keyID > largestKeyID { largestKeyID = entries[i].keyID }
        if Int(largestKeyID) >= slotOfKey.count {
            slotOfKey.append(contentsOf: repeatElement(-1, count: Int(largestKeyID) + 1 - slotOfKey.count))
        }
        // Out of `self` while its buffer is in use, so `lastReceived` can change meanwhile.
        var slots: [Int32] = []
        swap(&slots, &slotOfKey)
        defer { swap(&slots, &slotOfKey) }
        var delivered = 0
        slots.withUnsafeMutableBufferPointer { slots in
            entries.withUnsafeMutableBufferPointer { entries in
                for i in entries.indices {
                    let keyIndex = Int(entries[i].keyID)
                    let slot = Int(slots[keyIndex])
                    // Not `nil`: JSONValue is ExpressibleByNilLiteral, and a bare `nil` here would be JSON null.
                    let previous: JSONValue?
                    if slot >= 0 {
                        if policy == .changed, lastReceived[slot] == entries[i].value { continue }
                        // The table keeps a copy of the new value; the old one moves out into `previous`.
                        var last = entries[i].value
                        swap(&last, &lastReceived[slot])
                        previous = .some(last)
                    } else {
                        slots[keyIndex] = Int32(lastReceived.count)
                        lastReceived.append(entries[i].value)
                        previous = .none
                    }
                    let coalesced = switch count {
                    case .one: 1
                    case .held: entries[i].count
                    case .none: 0
                    }
                    out.append(.notification(BusNotification(
                        key: entries[i].takeKey(), value: entries[i].takeValue(), previous: previous,
                        coalesced: coalesced, firstEventTime: entries[i].first, lastEventTime: entries[i].last,
                        time: time ?? entries[i].last, kind: kind)))
                    delivered += 1
                }
            }
        }
        return delivered
    }
}

extension PendingItem {
    /// How many events it can turn into (at most), to reserve room for them.
    var eventCapacity: Int {
        switch self {
        case .events(let entries): entries.count
        case .suspended: 1
        case .flush(_, let entries, _): entries.count + 1
        case .resync(_, let entries, _): entries.count + 2
        case .initial(_, let entries): entries.count
        case .collapsed(let entries, _): entries.count
        }
    }
}
