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

    /// Takes one more event for its key (one access to the entry where it is stored, so one
    /// uniqueness check of the array holding it).
    @inline(__always)
    mutating func update(value: JSONValue, time: Duration, seq: UInt64) {
        self.value = value
        count += 1
        last = time
        self.seq = seq
    }

    /// Takes an entry for the same key that stands for later events: its value, its latest event
    /// and its count.
    @inline(__always)
    mutating func merge(_ later: HeldEntry) {
        value = later.value
        count += later.count
        last = later.last
        seq = later.seq
    }

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
    /// Events delivered live, in order (a run of them between two other items).
    case events([HeldEntry])
    case suspended(Duration)
    /// A resume and the held entries to flush (`ordered` when already in event order).
    case flush(time: Duration, entries: [HeldEntry], ordered: Bool)
    /// The subscriber lost track, or asked for every value again (`reason`): current values
    /// follow, after a `resumed` mark when `afterResume`.
    case resync(time: Duration, entries: [HeldEntry], afterResume: Bool, reason: ResyncReason)
    /// Current values on subscribing.
    case initial(time: Duration, entries: [HeldEntry])
    /// The backlog of a slow subscriber, collapsed per key.
    case collapsed(entries: [HeldEntry], ordered: Bool)
}

extension PendingItem {
    /// Whether it is events (live, or a slow subscriber's collapsed backlog), not a mark or a batch of values.
    var isEvents: Bool {
        switch self {
        case .events, .collapsed: true
        case .suspended, .flush, .resync, .initial: false
        }
    }

    /// Moves the entries out of an item (leaving it with none), so the consumer owns them alone and
    /// can move their keys out; empty for `suspended`.
    mutating func takeEntries() -> [HeldEntry] {
        switch self {
        case .events(let entries):
            self = .events([])
            return entries
        case .suspended:
            return []
        case .flush(let time, let entries, let ordered):
            self = .flush(time: time, entries: [], ordered: ordered)
            return entries
        case .resync(let time, let entries, let afterResume, let reason):
            self = .resync(time: time, entries: [], afterResume: afterResume, reason: reason)
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

/// What waits for a subscriber's consumer: its items, in order.
///
/// A live event is one `HeldEntry` appended to the run after the last item; the run becomes an
/// `events` item when another item follows it or the consumer takes the outbox. An event then
/// costs an append to a plain array, not an enum item of its own to copy and destroy.
struct Outbox {
    private var items: [PendingItem] = []
    private var live: [HeldEntry] = []
    /// The length of the last run, to reserve room for the next one at once.
    private var lastRunCount = 0

    /// Items and live events waiting.
    var count: Int { items.count + live.count }

    mutating func append(_ item: PendingItem) {
        closeRun()
        items.append(item)
    }

    mutating func appendLive(_ entry: HeldEntry) {
        if live.capacity == 0 { live.reserveCapacity(max(lastRunCount, 16)) }
        live.append(entry)
    }

    /// Hands over the entries of the events that wait at its end, in order: the live run and the
    /// `events` and `collapsed` items after the last other item. Earlier items stay.
    mutating func takeTrailingEntries() -> [HeldEntry] {
        var start = items.endIndex
        while start > items.startIndex, items[start - 1].isEvents { start -= 1 }
        var entries: [HeldEntry] = []
        for i in start..<items.endIndex { entries += items[i].takeEntries() }
        items.removeSubrange(start...)
        if !live.isEmpty {
            lastRunCount = live.count
            entries += live
            live = []
        }
        return entries
    }

    /// Hands over everything waiting, in order, and starts empty.
    mutating func take() -> [PendingItem] {
        closeRun()
        let taken = items
        items = []
        return taken
    }

    private mutating func closeRun() {
        guard !live.isEmpty else { return }
        lastRunCount = live.count
        items.append(.events(live))
        live = []
    }
}
