/// What a subscriber holds for one key (or, under `.all`, for one event).
struct HeldEntry: Sendable {
    var keyID: Int32
    let key: String
    var value: JSONValue
    /// Events it stands for; 0 for a current value taken from the store.
    var count: Int
    var first: Duration
    var last: Duration
    /// Sequence number of the latest event, for flush order.
    var seq: UInt64
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
