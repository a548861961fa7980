/// Everything a bus knows, kept behind its one lock: the store (latest value
/// per key), the subscribers, and per key the subscribers it routes to.
struct BusState {
    struct KeyRecord {
        /// The key, split into its segments once for every pattern it is matched against.
        let split: SplitKey
        var key: String { split.text }
        var value: JSONValue?
        var seq: UInt64 = 0
        var time: Duration = .zero
        /// Subscribers whose patterns match the key, in the order they subscribed (their IDs').
        ///
        /// Unretained: `subscribers` owns them, and a subscriber leaves the routes of every key it
        /// is routed from (its `routedKeys`) when it is removed, so a route list holds only live
        /// subscribers. Retaining each one per publish costs an atomic increment and decrement,
        /// more than the rest of a publish to it.
        var routes: [Unmanaged<SubscriberCore>] = []
    }

    var keyIDs = KeyIndex()
    var keys: [KeyRecord] = []
    var subscribers: [Int: SubscriberCore] = [:]
    /// Subscribers in the order they subscribed, which is the order of their IDs.
    var subscriberOrder: [SubscriberCore] = []
    var seq: UInt64 = 0
    var nextSubscriberID = 1
    /// The counters of the live ``HoldBudget`` handles, by ID; holds keep their own references.
    var budgets: [Int: BudgetCore] = [:]
    var nextBudgetID = 1
    /// Journals, which see every publish and lifecycle change (rare: recording).
    var journals: [JournalCore] = []

    private func journal(_ entry: @autoclosure () -> JournalEntry, _ wakes: inout [Wakeup]) {
        guard !journals.isEmpty else { return }
        let entry = entry()
        for journal in journals { journal.append(entry, &wakes) }
    }

    // MARK: Keys and the store

    mutating func keyID(for key: String) -> Int32 {
        if let id = keyIDs.id(of: key) { return id }
        let id = Int32(keys.count)
        keys.append(KeyRecord(split: SplitKey(key)))
        keyIDs.insert(key, id: id)
        route(newKey: Int(id))
        return id
    }

    mutating func publish(keyID: Int32, value: JSONValue, time: Duration) -> [Wakeup] {
        var wakes: [Wakeup] = []
        publish(keyID: keyID, value: value, time: time, wakes: &wakes)
        return wakes
    }

    /// Publishes one event; what to do once unlocked goes to `wakes` (one list for a whole batch).
    mutating func publish(keyID: Int32, value: JSONValue, time: Duration, wakes: inout [Wakeup]) {
        seq &+= 1
        let index = Int(keyID)
        let seq = self.seq
        let keyCount = keys.count
        // Through a buffer pointer and by index, so the record is borrowed where it is stored: a
        // `for route in keys[index].routes` copies (retains and releases) the routes array.
        keys.withUnsafeMutableBufferPointer { keys in
            keys[index].value = value
            keys[index].seq = seq
            keys[index].time = time
            let routeCount = keys[index].routes.count
            for r in 0..<routeCount {
                keys[index].routes[r]._withUnsafeGuaranteedRef { subscriber in
                    subscriber.receive(
                        keyID: keyID, key: { keys[index].key }, value: value, seq: seq, time: time,
                        keyCount: keyCount, wakes: &wakes)
                }
            }
        }
        // Tested here, not only inside `journal`: building the entry's closure copies the state.
        if !journals.isEmpty { journal(.event(key: keys[index].key, value: value, time: time), &wakes) }
    }

    /// The current value of every key matching `patterns`, in order of each key's latest event.
    func snapshot(matching patterns: [KeyPattern]) -> [HeldEntry] {
        var entries: [HeldEntry] = []
        for (index, record) in keys.enumerated() {
            guard let value = record.value, patterns.anyMatches(record.split) else { continue }
            entries.append(HeldEntry(
                keyID: Int32(index), key: record.key, value: value, count: 0,
                first: record.time, last: record.time, seq: record.seq))
        }
        entries.sort { $0.seq < $1.seq }
        return entries
    }

    // MARK: Subscribers

    mutating func add(_ subscriber: SubscriberCore, initial: InitialDelivery, time: Duration) -> [Wakeup] {
        subscribers[subscriber.id] = subscriber
        subscriberOrder.append(subscriber)
        route(keysTo: subscriber)
        var wakes: [Wakeup] = []
        journal(.subscribed(
            id: subscriber.id, name: subscriber.name, patterns: subscriber.patterns, policy: subscriber.policy,
            limit: subscriber.hold.limit, initial: initial, time: time), &wakes)
        if initial == .current {
            subscriber.outbox.append(.initial(time: time, entries: currentValues(for: subscriber)))
            subscriber.wake(&wakes)
        }
        return wakes
    }

    mutating func remove(id: Int, time: Duration) -> [Wakeup] {
        guard let subscriber = subscribers.removeValue(forKey: id) else { return [] }
        unroute(subscriber)
        subscriber.hold.reset()
        subscriber.outbox = Outbox()
        var wakes: [Wakeup] = []
        journal(.unsubscribed(id: id, time: time), &wakes)
        if let waiter = subscriber.waiter {
            subscriber.waiter = nil
            wakes.append(.resume(waiter, nil))
        }
        return wakes
    }

    /// Suspends subscriber `id`. With `holdingPending`, the events waiting for its consumer at the
    /// end of its outbox, and a slow subscriber's backlog, go back into its hold first.
    mutating func suspend(id: Int, time: Duration, holdingPending: Bool = false) -> [Wakeup] {
        guard let subscriber = subscribers[id], !subscriber.isSuspended else { return [] }
        if holdingPending {
            holdPending(of: subscriber)
        } else if subscriber.isCongested {
            releaseBacklog(of: subscriber)
        }
        subscriber.isSuspended = true
        subscriber.outbox.append(.suspended(time))
        var wakes: [Wakeup] = []
        journal(.suspended(id: id, time: time), &wakes)
        subscriber.wake(&wakes)
        return wakes
    }

    mutating func resume(id: Int, time: Duration) -> [Wakeup] {
        guard let subscriber = subscribers[id], subscriber.isSuspended else { return [] }
        subscriber.isSuspended = false
        if let reason = subscriber.hold.resyncReason {
            subscriber.hold.reset()
            subscriber.outbox.append(
                .resync(time: time, entries: currentValues(for: subscriber), afterResume: true, reason: reason))
        } else {
            subscriber.outbox.append(
                .flush(time: time, entries: subscriber.hold.take(), ordered: !subscriber.hold.coalesces))
        }
        var wakes: [Wakeup] = []
        journal(.resumed(id: id, time: time), &wakes)
        subscriber.wake(&wakes)
        return wakes
    }

    /// Sends subscriber `id` every current value after a `resync` mark (reason `requested`): now when
    /// it is active, on its resume when it is suspended (what it held is discarded).
    mutating func resync(id: Int, time: Duration) -> [Wakeup] {
        guard let subscriber = subscribers[id] else { return [] }
        if subscriber.isSuspended {
            subscriber.hold.discard(for: .requested)
            return []
        }
        // A slow subscriber's backlog is older than the values sent now: they replace it.
        if subscriber.isCongested {
            subscriber.isCongested = false
            subscriber.hold.reset()
        }
        subscriber.outbox.append(
            .resync(time: time, entries: currentValues(for: subscriber), afterResume: false, reason: .requested))
        var wakes: [Wakeup] = []
        subscriber.wake(&wakes)
        return wakes
    }

    /// Everything waiting for the consumer of `id`; `nil` once the subscription has ended.
    mutating func take(id: Int) -> [PendingItem]? {
        guard let subscriber = subscribers[id] else { return nil }
        return take(subscriber)
    }

    mutating func take(_ subscriber: SubscriberCore) -> [PendingItem] {
        if subscriber.isCongested && !subscriber.isSuspended { releaseBacklog(of: subscriber) }
        // A polling consumer takes everything: the next event tells it again.
        if subscriber.notifiesReady { subscriber.callbackPending = false }
        return subscriber.outbox.take()
    }

    /// Puts the events that wait for the consumer, delivered live but not taken, back into the hold
    /// as if they had arrived while suspended, in their order, and after them a slow subscriber's
    /// backlog (later events). They count against the limit and the budget as new events would;
    /// under `drop` they are discarded, and so is a backlog past the limit.
    private func holdPending(of subscriber: SubscriberCore) {
        let pending = subscriber.outbox.takeTrailingEntries()
        var backlog: [HeldEntry] = []
        if subscriber.isCongested {
            subscriber.isCongested = false
            if subscriber.policy == .drop { subscriber.hold.reset() } else { backlog = subscriber.hold.take() }
        }
        guard subscriber.policy != .drop else { return }
        for entry in pending { subscriber.hold.add(entry, keyCount: keys.count) }
        for entry in backlog { subscriber.hold.add(entry, keyCount: keys.count) }
    }

    /// Moves a slow subscriber's collapsed backlog into its outbox.
    private func releaseBacklog(of subscriber: SubscriberCore) {
        subscriber.isCongested = false
        if let reason = subscriber.hold.resyncReason {
            subscriber.hold.reset()
            // Delivered live, not at a resume: at the time of the latest event it stands for.
            let current = currentValues(for: subscriber)
            subscriber.outbox.append(
                .resync(time: current.last?.last ?? .zero, entries: current, afterResume: false, reason: reason))
        } else if !subscriber.hold.isEmpty {
            subscriber.outbox.append(
                .collapsed(entries: subscriber.hold.take(), ordered: !subscriber.hold.coalesces))
        }
    }
}
