/// What a subscriber holds for one key (or, under `.all`, for one event).
struct HeldEntry: Sendable {
    var keyID: Int32
    var key: String
    var value: JSONValue
    /// Events it stands for; 0 for a current value taken from the store.
    var count: Int
    var first: Duration
    var last: Duration
    /// Sequence number of the latest event, for flush order.
    var seq: UInt64

    /// Moves the key out, leaving an empty string: handing it to a notification that way costs no
    /// reference counting (a copy retains it, and freeing the entry releases it again).
    mutating func takeKey() -> String {
        var key = ""
        swap(&key, &self.key)
        return key
    }

    /// Moves the value out, leaving JSON null, for the same reason as ``takeKey()``.
    mutating func takeValue() -> JSONValue {
        var value = JSONValue.null
        swap(&value, &self.value)
        return value
    }
}

/// What waits in a subscriber's outbox for its consumer, in order.
///
/// Turning these into `SubscriptionEvent`s (`previous`, the `changed` filter,
/// flush order) happens on the consumer's side, outside the bus lock.
enum PendingItem: Sendable {
    /// One event delivered live.
    case event(HeldEntry)
    case suspended(Duration)
    /// A resume and the held entries to flush (`ordered` when already in event order).
    case flush(time: Duration, entries: [HeldEntry], ordered: Bool)
    /// The subscriber lost track: current values follow, after a `resumed` mark when `afterResume`.
    case resync(time: Duration, entries: [HeldEntry], afterResume: Bool)
    /// Current values on subscribing.
    case initial(time: Duration, entries: [HeldEntry])
    /// The backlog of a slow subscriber, collapsed per key.
    case collapsed(entries: [HeldEntry], ordered: Bool)
}

extension PendingItem {
    /// Moves the entries out of a `flush`, `resync`, `initial` or `collapsed` item (leaving it with
    /// none), so the consumer owns them alone and can move their keys out; empty for the others.
    mutating func takeEntries() -> [HeldEntry] {
        switch self {
        case .event, .suspended:
            return []
        case .flush(let time, let entries, let ordered):
            self = .flush(time: time, entries: [], ordered: ordered)
            return entries
        case .resync(let time, let entries, let afterResume):
            self = .resync(time: time, entries: [], afterResume: afterResume)
            return entries
        case .initial(let time, let entries):
            self = .initial(time: time, entries: [])
            return entries
        case .collapsed(let entries, let ordered):
            self = .collapsed(entries: [], ordered: ordered)
            return entries
        }
    }
}
