/// The events a subscriber holds while it is suspended (or too slow), bounded by `limit` and by
/// its shared budget, if any.
///
/// Coalescing (every policy but `.all`): one entry per key, found through a
/// dense slot table indexed by key ID, so an update is two array accesses.
/// Under `.all`: one entry per event. Past `limit` it discards everything and
/// remembers why; the subscriber then resyncs. It does the same when its budget
/// (or an ancestor of it) has no room for a new entry, and when the subscriber asks to resync.
/// Every entry it holds counts against the budget until it is taken, reset or discarded.
struct Hold {
    let coalesces: Bool
    let limit: Int
    let budget: BudgetCore?
    private var slotOfKey: [Int32] = []
    private(set) var entries: [HeldEntry] = []
    /// Why it discarded what it held and holds nothing more, if it did: the reason of the
    /// subscriber's resync.
    private(set) var resyncReason: ResyncReason?

    init(coalesces: Bool, limit: Int, budget: BudgetCore? = nil) {
        self.coalesces = coalesces
        self.limit = limit
        self.budget = budget
    }

    /// It discarded what it held and holds nothing more, until it is reset.
    var lostTrack: Bool { resyncReason != nil }

    var isEmpty: Bool { entries.isEmpty && !lostTrack }

    /// Adds an event; `key` is called only when the event needs a new entry.
    mutating func add(
        keyID: Int32, key: () -> String, value: JSONValue, seq: UInt64, time: Duration, keyCount: Int
    ) {
        if lostTrack { return }
        guard coalesces else {
            if entries.count >= limit || !reserve() { overflow(); return }
            entries.append(HeldEntry(keyID: keyID, key: key(), value: value, count: 1, first: time, last: time, seq: seq))
            return
        }
        let index = Int(keyID)
        if index >= slotOfKey.count {
            slotOfKey.append(contentsOf: repeatElement(-1, count: keyCount - slotOfKey.count))
        }
        let slot = Int(slotOfKey[index])
        if slot >= 0 {
            entries[slot].update(value: value, time: time, seq: seq)
        } else if entries.count >= limit || !reserve() {
            overflow()
        } else {
            slotOfKey[index] = Int32(entries.count)
            entries.append(HeldEntry(keyID: keyID, key: key(), value: value, count: 1, first: time, last: time, seq: seq))
        }
    }

    /// Adds an entry that stands for `entry.count` events, later than every entry added before it
    /// (one taken back from an outbox); `keyCount` as for `add(keyID:key:value:seq:time:keyCount:)`.
    mutating func add(_ entry: HeldEntry, keyCount: Int) {
        if lostTrack { return }
        guard coalesces else {
            if entries.count >= limit || !reserve() { overflow(); return }
            entries.append(entry)
            return
        }
        let index = Int(entry.keyID)
        if index >= slotOfKey.count {
            slotOfKey.append(contentsOf: repeatElement(-1, count: max(keyCount, index + 1) - slotOfKey.count))
        }
        let slot = Int(slotOfKey[index])
        if slot >= 0 {
            entries[slot].merge(entry)
        } else if entries.count >= limit || !reserve() {
            overflow()
        } else {
            slotOfKey[index] = Int32(entries.count)
            entries.append(entry)
        }
    }

    /// Counts a new entry against the budget; `false` when the budget has no room for it.
    private func reserve() -> Bool {
        guard let budget else { return true }
        return budget.reserve()
    }

    /// Hands over the held entries (in first-event order), returns them to the budget, and starts empty.
    mutating func take() -> [HeldEntry] {
        if coalesces && !entries.isEmpty {
            // When the entries stand for a good part of the table, clearing all of it (one fill)
            // costs less than clearing their slots one by one.
            if entries.count >= slotOfKey.count / 16 {
                slotOfKey.withUnsafeMutableBufferPointer { $0.update(repeating: -1) }
            } else {
                for e in entries { slotOfKey[Int(e.keyID)] = -1 }
            }
        }
        if let budget, !entries.isEmpty { budget.release(entries.count) }
        let taken = entries
        entries = []
        return taken
    }

    /// Forgets everything, including why it lost track.
    mutating func reset() {
        _ = take()
        resyncReason = nil
    }

    /// Discards what it holds and holds nothing more, until it is reset: the subscriber resyncs for
    /// `reason` (a request outranks a limit, as it resends every value).
    mutating func discard(for reason: ResyncReason) {
        _ = take()
        if resyncReason != .requested { resyncReason = reason }
    }

    /// Out of line: rare, and kept out of the publish path that inlines `add`.
    @inline(never)
    private mutating func overflow() {
        discard(for: .limit)
    }
}
