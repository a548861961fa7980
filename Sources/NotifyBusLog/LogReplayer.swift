public import NotifyBus

/// One line of replay output: a subscriber's event at a log time.
public struct ReplayLine: Sendable, Hashable {
    /// The log time of the record that produced it.
    public var t: LogTime
    /// The name of the subscriber that received the event.
    public var subscriber: String
    /// What the subscriber received: a notification or a lifecycle mark.
    public var event: SubscriptionEvent
}

/// Replays a log on a virtual clock, one record per `step()`.
///
/// Each record is applied to a fresh `NotificationBus` at the record's time;
/// what every subscriber receives because of it is returned at once, in the
/// order the subscribers appeared. Use it from one thread.
///
/// ```swift
/// let replayer = LogReplayer(log: try EventLog(parsing: text, file: "app.jsonl"))
/// try replayer.run { lines in
///     for line in lines { print(line.t, line.subscriber, line.event) }
/// }
/// ```
public final class LogReplayer {
    /// The log being replayed.
    public let log: EventLog
    /// The bus the records are applied to.
    public let bus = NotificationBus(clock: .zero)
    /// The index of the next entry to replay.
    public private(set) var position = 0
    private var subscribers: [(name: String, subscription: Subscription)] = []

    /// Prepares a replay. A log without any `subscribe` record replays as if it
    /// began with a subscribe of `"default"` at time 0.
    public init(log: EventLog) {
        self.log = log
        let hasSubscribe = log.entries.contains {
            if case .subscribe = $0.record { return true }
            return false
        }
        if !hasSubscribe {
            subscribers.append(("default", bus.subscribe(name: "default", at: .zero)))
        }
    }

    /// Whether every entry has been replayed.
    public var isFinished: Bool { position >= log.entries.count }

    /// The names of the subscribers that exist now, in the order they appeared.
    public var subscriberNames: [String] { subscribers.map(\.name) }

    /// The subscription of a subscriber that exists now.
    public func subscription(named name: String) -> Subscription? {
        subscribers.first { $0.name == name }?.subscription
    }

    /// Replays the next entry and returns the lines it produces; empty once finished.
    ///
    /// A record that names a subscriber that does not exist (or a subscribe of one
    /// that does) throws an error naming the file and line, and replays nothing.
    /// The replayer then stands past that entry, so a caller may go on.
    public func step() throws(EventLogError) -> [ReplayLine] {
        guard position < log.entries.count else { return [] }
        let entry = log.entries[position]
        position += 1
        let time = entry.t.duration
        switch entry.record {
        case .event(let key, let value, _):
            bus.publish(key, value, at: time)
        case .subscribe(let s):
            guard index(of: s.subscriber) == nil else {
                throw fail(entry, "subscriber \"\(s.subscriber)\" already exists")
            }
            let subscription = bus.subscribe(
                s.match, policy: s.policy, limit: s.limit ?? NotificationBus.defaultLimit,
                initial: s.initial, name: s.subscriber, at: time)
            subscribers.append((s.subscriber, subscription))
        case .suspend(let name):
            try existing(name, entry).suspend(at: time)
        case .resume(let name):
            try existing(name, entry).resume(at: time)
        case .unsubscribe(let name):
            try existing(name, entry).cancel()
            subscribers.removeAll { $0.name == name }
        }
        var lines: [ReplayLine] = []
        for (name, subscription) in subscribers {
            for event in subscription.poll() {
                lines.append(ReplayLine(t: entry.t, subscriber: name, event: event))
            }
        }
        return lines
    }

    /// Replays every remaining entry, handing each entry's lines to `body`.
    public func run(_ body: ([ReplayLine]) -> Void) throws(EventLogError) {
        while !isFinished { body(try step()) }
    }

    private func index(of name: String) -> Int? { subscribers.firstIndex { $0.name == name } }

    private func existing(_ name: String, _ entry: LogEntry) throws(EventLogError) -> Subscription {
        guard let i = index(of: name) else {
            throw fail(entry, "no subscriber named \"\(name)\" (it never subscribed, or has unsubscribed)")
        }
        return subscribers[i].subscription
    }

    private func fail(_ entry: LogEntry, _ message: String) -> EventLogError {
        EventLogError(file: log.file, line: entry.line, message: message)
    }
}
