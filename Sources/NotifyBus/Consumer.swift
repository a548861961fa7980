import Synchronization

/// The consumer side of one subscription: turns pending items into events.
///
/// It keeps what the subscriber last received per key, so `previous` and the
/// `changed` filter are decided in delivery order, outside the bus lock.
final class Consumer: Sendable {
    let handler: (@Sendable (SubscriptionEvent) -> Void)?
    private let materializer: Mutex<Materializer>

    init(policy: DeliveryPolicy, handler: (@Sendable (SubscriptionEvent) -> Void)?) {
        self.handler = handler
        self.materializer = Mutex(Materializer(policy: policy))
    }

    func events(from items: [PendingItem]) -> [SubscriptionEvent] {
        materializer.withLock { $0.events(from: items) }
    }
}

struct Materializer {
    let policy: DeliveryPolicy
    /// The value last received per key ID.
    var lastReceived: [Int32: JSONValue] = [:]

    init(policy: DeliveryPolicy) { self.policy = policy }

    mutating func events(from items: [PendingItem]) -> [SubscriptionEvent] {
        var out: [SubscriptionEvent] = []
        out.reserveCapacity(items.count)
        for item in items {
            switch item {
            case .event(let e):
                deliver(e, coalesced: 1, time: e.last, kind: .live, into: &out)
            case .suspended(let time):
                out.append(.suspended(time: time))
            case .flush(let time, let entries, let ordered):
                let mark = out.count
                out.append(.resumed(time: time, flushed: 0))
                var flushed = 0
                for e in Self.inEventOrder(entries, ordered: ordered)
                where deliver(e, coalesced: e.count, time: time, kind: .flushed, into: &out) {
                    flushed += 1
                }
                out[mark] = .resumed(time: time, flushed: flushed)
            case .resync(let time, let entries, let afterResume):
                let mark = out.count
                if afterResume { out.append(.resumed(time: time, flushed: 0)) }
                out.append(.resync(time: time, reason: .limit))
                var flushed = 0
                for e in entries where deliver(e, coalesced: 0, time: time, kind: .resync, into: &out) {
                    flushed += 1
                }
                if afterResume { out[mark] = .resumed(time: time, flushed: flushed) }
            case .initial(let time, let entries):
                for e in entries { deliver(e, coalesced: 0, time: time, kind: .initial, into: &out) }
            case .collapsed(let entries, let ordered):
                for e in Self.inEventOrder(entries, ordered: ordered) {
                    deliver(e, coalesced: e.count, time: e.last, kind: .collapsed, into: &out)
                }
            }
        }
        return out
    }

    private static func inEventOrder(_ entries: [HeldEntry], ordered: Bool) -> [HeldEntry] {
        ordered ? entries : entries.sorted { $0.seq < $1.seq }
    }

    /// Appends a notification unless `changed` filters it; returns whether it did.
    @discardableResult
    private mutating func deliver(
        _ e: HeldEntry, coalesced: Int, time: Duration, kind: BusNotification.Kind,
        into out: inout [SubscriptionEvent]
    ) -> Bool {
        let previous = lastReceived[e.keyID]
        if policy == .changed, let previous, previous == e.value { return false }
        out.append(.notification(BusNotification(
            key: e.key, value: e.value, previous: previous, coalesced: coalesced,
            firstEventTime: e.first, lastEventTime: e.last, time: time, kind: kind)))
        lastReceived[e.keyID] = e.value
        return true
    }
}
