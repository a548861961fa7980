import NotifyBus

/// A deliberately plain, independent model of the delivery rules, written from the
/// specification's text: dictionaries and lists, no sequence numbers shared with the bus.
struct ReferenceModel {
    enum Event: Equatable, CustomStringConvertible {
        case note(key: String, value: JSONValue, previous: JSONValue?, coalesced: Int, time: Int)
        case suspended(time: Int)
        case resumed(flushed: Int, time: Int)
        case resync(reason: String, time: Int)

        var description: String {
            switch self {
            case let .note(k, v, p, c, t): "note(\(k)=\(v) prev=\(p.map(\.jsonText) ?? "-") ×\(c) @\(t))"
            case let .suspended(t): "suspended@\(t)"
            case let .resumed(n, t): "resumed(\(n))@\(t)"
            case let .resync(r, t): "resync(\(r))@\(t)"
            }
        }
    }

    struct Subscriber {
        var patterns: [String]
        var policy: DeliveryPolicy
        var limit: Int
        /// Whether its entries count against the model's one shared budget.
        var budgeted = false
        var suspended = false
        var overflowed = false
        /// It asked for every value while suspended: its resume resyncs with reason `requested`.
        var resyncRequested = false
        /// Per key under latest/changed: value, count, and the order of its latest event.
        var held: [String: (value: JSONValue, count: Int, order: Int)] = [:]
        /// Under `all`: every held event.
        var heldEvents: [(key: String, value: JSONValue)] = []
        var last: [String: JSONValue] = [:]
        var out: [Event] = []

        func matches(_ key: String) -> Bool {
            patterns.contains { ReferenceModel.match(Array($0.split(separator: "/", omittingEmptySubsequences: false)), Array(key.split(separator: "/", omittingEmptySubsequences: false))) }
        }

        mutating func give(_ key: String, _ value: JSONValue, coalesced: Int, time: Int, filtered: Bool = true) -> Bool {
            if filtered, policy == .changed, let prev = last[key], prev == value { return false }
            out.append(.note(key: key, value: value, previous: last[key], coalesced: coalesced, time: time))
            last[key] = value
            return true
        }
    }

    /// The store: latest value per key and the order of its latest event.
    var store: [String: (value: JSONValue, order: Int)] = [:]
    var order = 0
    var subscribers: [Int: Subscriber] = [:]
    /// One budget shared by the subscribers that are `budgeted`: its limit and the entries they hold.
    var budgetLimit = Int.max
    var budgetHeld = 0

    static func match(_ p: [Substring], _ k: [Substring]) -> Bool {
        guard let first = p.first else { return k.isEmpty }
        if first == "**" {
            return match(Array(p.dropFirst()), k) || (!k.isEmpty && match(p, Array(k.dropFirst())))
        }
        guard let head = k.first else { return false }
        return (first == "*" || first == head) && match(Array(p.dropFirst()), Array(k.dropFirst()))
    }

    func current(for sub: Subscriber) -> [(key: String, value: JSONValue)] {
        store.filter { sub.matches($0.key) }.sorted { $0.value.order < $1.value.order }.map { ($0.key, $0.value.value) }
    }

    mutating func subscribe(
        id: Int, patterns: [String], policy: DeliveryPolicy, limit: Int, budgeted: Bool = false, initial: Bool, time: Int
    ) {
        var sub = Subscriber(patterns: patterns, policy: policy, limit: limit, budgeted: budgeted)
        if initial {
            for (k, v) in current(for: sub) { _ = sub.give(k, v, coalesced: 0, time: time) }
        }
        subscribers[id] = sub
    }

    mutating func publish(_ key: String, _ value: JSONValue, time: Int) {
        order += 1
        store[key] = (value, order)
        // In subscribe order: with a shared budget, who overflows depends on who asks first.
        for id in subscribers.keys.sorted() {
            guard subscribers[id]!.matches(key) else { continue }
            var sub = subscribers[id]!
            if !sub.suspended {
                _ = sub.give(key, value, coalesced: 1, time: time)
            } else if sub.overflowed || sub.policy == .drop {
                // held nothing
            } else if sub.policy == .all {
                if sub.heldEvents.count + 1 > sub.limit || !budgetHasRoom(sub) {
                    release(sub)
                    sub.overflowed = true
                    sub.heldEvents = []
                } else {
                    sub.heldEvents.append((key, value))
                    if sub.budgeted { budgetHeld += 1 }
                }
            } else if let h = sub.held[key] {
                sub.held[key] = (value, h.count + 1, order)
            } else if sub.held.count + 1 > sub.limit || !budgetHasRoom(sub) {
                release(sub)
                sub.overflowed = true
                sub.held = [:]
            } else {
                sub.held[key] = (value, 1, order)
                if sub.budgeted { budgetHeld += 1 }
            }
            subscribers[id] = sub
        }
    }

    func budgetHasRoom(_ sub: Subscriber) -> Bool { !sub.budgeted || budgetHeld + 1 <= budgetLimit }

    /// Returns what `sub` holds to the shared budget.
    mutating func release(_ sub: Subscriber) {
        if sub.budgeted { budgetHeld -= sub.held.count + sub.heldEvents.count }
    }

    mutating func suspend(id: Int, time: Int) {
        guard var sub = subscribers[id], !sub.suspended else { return }
        sub.suspended = true
        sub.out.append(.suspended(time: time))
        subscribers[id] = sub
    }

    mutating func resume(id: Int, time: Int) {
        guard var sub = subscribers[id], sub.suspended else { return }
        sub.suspended = false
        var notes = Subscriber(patterns: [], policy: sub.policy, limit: 0)
        notes.last = sub.last
        if sub.overflowed {
            for (k, v) in current(for: sub) {
                _ = notes.give(k, v, coalesced: 0, time: time, filtered: !sub.resyncRequested)
            }
            sub.out.append(.resumed(flushed: notes.out.count, time: time))
            sub.out.append(.resync(reason: sub.resyncRequested ? "requested" : "limit", time: time))
        } else if sub.policy == .all {
            for (k, v) in sub.heldEvents { _ = notes.give(k, v, coalesced: 1, time: time) }
            sub.out.append(.resumed(flushed: notes.out.count, time: time))
        } else {
            for (k, h) in sub.held.sorted(by: { $0.value.order < $1.value.order }) {
                _ = notes.give(k, h.value, coalesced: h.count, time: time)
            }
            sub.out.append(.resumed(flushed: notes.out.count, time: time))
        }
        sub.out += notes.out
        sub.last = notes.last
        release(sub)
        sub.overflowed = false
        sub.resyncRequested = false
        sub.held = [:]
        sub.heldEvents = []
        subscribers[id] = sub
    }

    /// The subscriber asks for every value: now when active (every value, whatever the policy); on
    /// resume when suspended, discarding what it holds.
    mutating func resync(id: Int, time: Int) {
        guard var sub = subscribers[id] else { return }
        if sub.suspended {
            release(sub)
            sub.held = [:]
            sub.heldEvents = []
            sub.overflowed = true
            sub.resyncRequested = true
        } else {
            sub.out.append(.resync(reason: "requested", time: time))
            for (k, v) in current(for: sub) { _ = sub.give(k, v, coalesced: 0, time: time, filtered: false) }
        }
        subscribers[id] = sub
    }

    mutating func cancel(id: Int) {
        if let sub = subscribers[id] { release(sub) }
        subscribers[id] = nil
    }

    /// Takes the events produced for subscriber `id` so far.
    mutating func take(id: Int) -> [Event] {
        guard var sub = subscribers[id] else { return [] }
        defer { sub.out = []; subscribers[id] = sub }
        return sub.out
    }
}

extension ReferenceModel.Event {
    /// The model's form of a bus event (times in whole seconds).
    init(_ event: SubscriptionEvent) {
        func seconds(_ d: Duration) -> Int { Int(d.components.seconds) }
        switch event {
        case .notification(let n):
            self = .note(key: n.key, value: n.value, previous: n.previous, coalesced: n.coalesced, time: seconds(n.time))
        case .suspended(let t): self = .suspended(time: seconds(t))
        case .resumed(let t, let flushed): self = .resumed(flushed: flushed, time: seconds(t))
        case .resync(let t, let reason): self = .resync(reason: reason.rawValue, time: seconds(t))
        }
    }
}

/// A small, fast, seeded generator (SplitMix64) so failures reproduce.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
