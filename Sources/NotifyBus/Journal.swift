import Synchronization

/// One thing that happened on a bus, in the order the bus saw it.
public enum JournalEntry: Sendable, Hashable {
    /// `value` was published for `key`.
    case event(key: String, value: JSONValue, time: Duration)
    /// A subscription appeared (`name` as given to `subscribe`).
    case subscribed(
        id: Int, name: String?, patterns: [KeyPattern], policy: DeliveryPolicy, limit: Int,
        initial: InitialDelivery, time: Duration)
    /// A subscription was suspended (only when it was active).
    case suspended(id: Int, time: Duration)
    /// A subscription was resumed (only when it was suspended).
    case resumed(id: Int, time: Duration)
    /// A subscription was cancelled.
    case unsubscribed(id: Int, time: Duration)
}

/// A record of everything that happens on a bus: every publish and every
/// subscription's lifecycle, in bus order (what an event log needs).
///
/// Entries are taken under the bus lock, so their order is the order in which
/// the bus applied them, whichever threads the publishers ran on; the handler
/// runs after the lock is released, in that order, one call at a time. A journal
/// never collapses or drops entries. Dropping the last reference, or `cancel()`,
/// ends it.
public final class Journal: Sendable {
    let bus: NotificationBus
    let id: Int

    init(bus: NotificationBus, id: Int) {
        self.bus = bus
        self.id = id
    }

    deinit { cancel() }

    /// Ends the journal; its handler is not called again once a call under way returns.
    public func cancel() {
        bus.withState { $0.journals.removeAll { $0.id == id } }
    }
}

/// The bus side of a journal. Only touched under the bus lock.
final class JournalCore {
    let id: Int
    let handler: @Sendable (JournalEntry) -> Void
    var outbox: [JournalEntry] = []
    var isDraining = false

    init(id: Int, handler: @escaping @Sendable (JournalEntry) -> Void) {
        self.id = id
        self.handler = handler
    }

    func append(_ entry: JournalEntry, _ wakes: inout [Wakeup]) {
        outbox.append(entry)
        if !isDraining {
            isDraining = true
            wakes.append(.drainJournal(id, handler))
        }
    }
}

extension NotificationBus {
    /// Starts a journal: `handler` gets every later publish and lifecycle change, in bus order.
    ///
    /// Used to record event logs. The handler runs on a thread that touched the bus
    /// (a publisher's, say); keep it short.
    public func journal(_ handler: @escaping @Sendable (JournalEntry) -> Void) -> Journal {
        let id = withState { state -> Int in
            let id = state.nextSubscriberID
            state.nextSubscriberID += 1
            state.journals.append(JournalCore(id: id, handler: handler))
            return id
        }
        return Journal(bus: self, id: id)
    }

    /// Runs a journal's handler until its outbox is empty.
    func drainJournal(id: Int, handler: @Sendable (JournalEntry) -> Void) {
        while true {
            let entries = withState { state -> [JournalEntry]? in
                guard let core = state.journals.first(where: { $0.id == id }) else { return nil }
                let entries = core.outbox
                core.outbox = []
                if entries.isEmpty { core.isDraining = false; return nil }
                return entries
            }
            guard let entries else { return }
            for entry in entries { handler(entry) }
        }
    }
}
