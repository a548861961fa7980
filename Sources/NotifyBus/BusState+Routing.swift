/// Routes: per key, the subscribers whose patterns match it, kept up to date one subscriber or
/// one key at a time.
///
/// A key is matched against every subscriber once, when it first appears; a subscriber against
/// every key once, when it subscribes. Each key's routes stay in subscription order (a new
/// subscriber comes last; a removal keeps the others' order), and each subscriber keeps the IDs
/// of the keys routed to it, so removing it touches only those keys.
extension BusState {
    /// Routes a key that has just appeared to every subscriber whose patterns match it.
    mutating func route(newKey index: Int) {
        guard !subscriberOrder.isEmpty else { return }
        let split = keys[index].split
        for subscriber in subscriberOrder where subscriber.patterns.anyMatches(split) {
            keys[index].routes.append(.passUnretained(subscriber))
            subscriber.routedKeys.append(Int32(index))
        }
    }

    /// Routes every key that a new subscriber's patterns match to it, after every earlier subscriber.
    mutating func route(keysTo subscriber: SubscriberCore) {
        for index in keys.indices where subscriber.patterns.anyMatches(keys[index].split) {
            keys[index].routes.append(.passUnretained(subscriber))
            subscriber.routedKeys.append(Int32(index))
        }
    }

    /// Takes a subscriber out of the routes of the keys routed to it, and out of `subscriberOrder`.
    mutating func unroute(_ subscriber: SubscriberCore) {
        let id = subscriber.id
        for keyID in subscriber.routedKeys {
            let index = Int(keyID)
            // Found through a borrowed buffer, so that removing it does not copy the list.
            let position = keys[index].routes.withUnsafeBufferPointer { routes in
                Self.position(of: id, count: routes.count, idAt: { routes[$0]._withUnsafeGuaranteedRef(\.id) })
            }
            if let position { keys[index].routes.remove(at: position) }
        }
        subscriber.routedKeys = []
        if let i = Self.position(of: id, count: subscriberOrder.count, idAt: { subscriberOrder[$0].id }) {
            subscriberOrder.remove(at: i)
        }
    }

    /// Where the subscriber with ID `id` is in a list ordered by ID, by binary search.
    private static func position(of id: Int, count: Int, idAt: (Int) -> Int) -> Int? {
        var low = 0
        var high = count
        while low < high {
            let mid = (low + high) / 2
            let midID = idAt(mid)
            if midID == id { return mid }
            if midID < id { low = mid + 1 } else { high = mid }
        }
        return nil
    }

    /// The current value of every key routed to `subscriber`, in order of each key's latest event.
    func currentValues(for subscriber: SubscriberCore) -> [HeldEntry] {
        var entries: [HeldEntry] = []
        for keyID in subscriber.routedKeys {
            let record = keys[Int(keyID)]
            guard let value = record.value else { continue }
            entries.append(HeldEntry(
                keyID: keyID, key: record.key, value: value, count: 0, first: record.time, last: record.time,
                seq: record.seq))
        }
        entries.sort { $0.seq < $1.seq }
        return entries
    }

    /// How many routes there are: one per key per subscriber whose patterns match it.
    var routeCount: Int { keys.reduce(0) { $0 + $1.routes.count } }
}
