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
    /// key ID as in `Hold` (-1: no slot yet), so a lookup is two array accesses and no hashing.
    /// A slot holds `nil` only while its key's first notification is being made.
    private var slotOfKey: [Int32] = []
    private var lastReceived: [JSONValue?] = []

    init(policy: DeliveryPolicy) { self.policy = policy }

    mutating func events(from items: inout [PendingItem]) -> [SubscriptionEvent] {
        var out: [SubscriptionEvent] = []
        out.reserveCapacity(items.reduce(0) { $0 + $1.eventCapacity })
        for k in items.indices {
            // The entries leave the item first, so this is their only owner and their keys and
            // values move into the notifications.
            var entries = items[k].takeEntries()
            switch items[k] {
            case .event(var e):
                withUnsafeMutablePointer(to: &e) { e in
                    let one = UnsafeMutableBufferPointer(start: e, count: 1)
                    _ = makeSlots(for: UnsafeBufferPointer(one))
                    _ = deliver(one, counted: true, at: nil, kind: .live, into: &out)
                }
            case .suspended(let time):
                out.append(.suspended(time: time))
            case .flush(let time, _, let ordered):
                let mark = out.count
                out.append(.resumed(time: time, flushed: 0))
                let flushed = deliver(&entries, sorting: !ordered, counted: true, at: time, kind: .flushed, into: &out)
                out[mark] = .resumed(time: time, flushed: flushed)
            case .resync(let time, _, let afterResume):
                let mark = out.count
                if afterResume { out.append(.resumed(time: time, flushed: 0)) }
                out.append(.resync(time: time, reason: .limit))
                let flushed = deliver(&entries, sorting: false, counted: false, at: time, kind: .resync, into: &out)
                if afterResume { out[mark] = .resumed(time: time, flushed: flushed) }
            case .initial(let time, _):
                deliver(&entries, sorting: false, counted: false, at: time, kind: .initial, into: &out)
            case .collapsed(_, let ordered):
                deliver(&entries, sorting: !ordered, counted: true, at: nil, kind: .collapsed, into: &out)
            }
        }
        return out
    }

    /// Appends a notification for each of `entries` (see the other `deliver`), first putting them
    /// in event order (by `seq`) when `sorting`; returns how many it appended.
    ///
    /// Sorting happens in place, which moves the entries without copying them (a copy retains a
    /// key and a value), and only when they are out of order: often they are not (each key
    /// published once), which the pass that makes the slots finds out.
    @discardableResult
    private mutating func deliver(
        _ entries: inout [HeldEntry], sorting: Bool, counted: Bool, at time: Duration?, kind: BusNotification.Kind,
        into out: inout [SubscriptionEvent]
    ) -> Int {
        let inOrder = entries.withUnsafeBufferPointer { makeSlots(for: $0) }
        if sorting && !inOrder { entries.sort { $0.seq < $1.seq } }
        return entries.withUnsafeMutableBufferPointer { deliver($0, counted: counted, at: time, kind: kind, into: &out) }
    }

    /// Gives each entry's key a slot in the tables (`nil` in `lastReceived` for a new key), so
    /// `deliver` can work on them in place; returns whether the entries are in event order.
    private mutating func makeSlots(for entries: UnsafeBufferPointer<HeldEntry>) -> Bool {
        var inOrder = true
        var seq: UInt64 = 0
        for i in entries.indices {
            if entries[i].seq < seq { inOrder = false }
            seq = entries[i].seq
            let index = Int(entries[i].keyID)
            if index >= slotOfKey.count {
                slotOfKey.append(contentsOf: repeatElement(-1, count: index + 1 - slotOfKey.count))
            }
            if slotOfKey[index] < 0 {
                slotOfKey[index] = Int32(lastReceived.count)
                lastReceived.append(.none)
            }
        }
        return inOrder
    }

    /// Appends a notification for each entry, in order, unless `changed` filters it; returns how
    /// many it appended.
    ///
    /// - Parameters:
    ///   - counted: whether a notification stands for its entry's `count` events (else for none).
    ///   - time: the notifications' time; `nil`: each entry's latest event's.
    ///
    /// Every entry's key has a slot already (`makeSlots`), so it works on the tables in place,
    /// without growing them or checking that they are uniquely referenced.
    /// The keys move out of the entries into the notifications, the values into the last-received
    /// table (whose old values move into `previous`): an entry is not read again, and a value is
    /// copied once, into its notification.
    private mutating func deliver(
        _ entries: UnsafeMutableBufferPointer<HeldEntry>, counted: Bool, at time: Duration?,
        kind: BusNotification.Kind, into out: inout [SubscriptionEvent]
    ) -> Int {
        let changedOnly = policy == .changed
        var delivered = 0
        slotOfKey.withUnsafeBufferPointer { slotOfKey in
            lastReceived.withUnsafeMutableBufferPointer { lastReceived in
                for i in entries.indices {
                    let last = lastReceived.baseAddress! + Int(slotOfKey[Int(entries[i].keyID)])
                    if changedOnly, let previous = last.pointee, previous == entries[i].value { continue }
                    out.append(.notification(BusNotification(
                        key: entries[i].takeKey(), value: entries[i].value, previous: last.move(),
                        coalesced: counted ? entries[i].count : 0, firstEventTime: entries[i].first,
                        lastEventTime: entries[i].last, time: time ?? entries[i].last, kind: kind)))
                    last.initialize(to: entries[i].takeValue())
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
        case .event, .suspended: 1
        case .flush(_, let entries, _): entries.count + 1
        case .resync(_, let entries, _): entries.count + 2
        case .initial(_, let entries): entries.count
        case .collapsed(let entries, _): entries.count
        }
    }
}
