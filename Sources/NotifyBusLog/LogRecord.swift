public import NotifyBus

/// One record of an event log (specification: Event log format, "Records"), without its time.
public enum LogRecord: Sendable, Hashable {
    /// A source published `value` for `key`.
    case event(key: String, value: JSONValue, source: String?)
    /// A subscriber appears.
    case subscribe(SubscribeRecord)
    /// The subscriber is suspended.
    case suspend(subscriber: String)
    /// The subscriber is resumed.
    case resume(subscriber: String)
    /// The subscriber goes away; what it held is discarded.
    case unsubscribe(subscriber: String)

    /// The subscriber a lifecycle record names, or `nil` for an event.
    public var subscriber: String? {
        switch self {
        case .event: nil
        case .subscribe(let s): s.subscriber
        case .suspend(let name), .resume(let name), .unsubscribe(let name): name
        }
    }
}

/// The fields of a `subscribe` record.
public struct SubscribeRecord: Sendable, Hashable {
    /// The subscriber's name.
    public var subscriber: String
    /// Its patterns; `["**"]` when the record has no `match`.
    public var match: [KeyPattern]
    /// Its policy; `latest` when the record has none.
    public var policy: DeliveryPolicy
    /// Its limit; the bus's default (`NotificationBus.defaultLimit`) when `nil`.
    public var limit: Int?
    /// Whether it gets the current values first (`"initial": "current"`).
    public var initial: InitialDelivery

    /// The fields of a `subscribe` record; every field but the name has the format's default.
    public init(
        subscriber: String, match: [KeyPattern] = [.all], policy: DeliveryPolicy = .latest,
        limit: Int? = nil, initial: InitialDelivery = .none
    ) {
        self.subscriber = subscriber
        self.match = match
        self.policy = policy
        self.limit = limit
        self.initial = initial
    }
}

/// A record with its time and the line it was read from.
public struct LogEntry: Sendable, Hashable {
    /// Seconds since the start of the log.
    public var t: LogTime
    /// What happened.
    public var record: LogRecord
    /// The 1-based line number in the file (0 for entries not read from a file).
    public var line: Int

    /// A record at time `t`, read from `line` (0 when it was not read from a file).
    public init(t: LogTime, record: LogRecord, line: Int = 0) {
        self.t = t
        self.record = record
        self.line = line
    }
}

extension LogEntry {
    /// The record as one line of log text (JSON, without the newline).
    public var jsonText: String {
        var object: JSONObject = ["t": t.json]
        switch record {
        case .event(let key, let value, let source):
            object["type"] = "event"
            object["key"] = .string(key)
            object["value"] = value
            if let source { object["source"] = .string(source) }
        case .subscribe(let s):
            object["type"] = "subscribe"
            object["subscriber"] = .string(s.subscriber)
            if s.match != [.all] { object["match"] = .array(s.match.map { .string($0.text) }) }
            if s.policy != .latest { object["policy"] = .string(s.policy.rawValue) }
            if let limit = s.limit { object["limit"] = .integer(Int64(limit)) }
            if s.initial == .current { object["initial"] = "current" }
        case .suspend(let name):
            object["type"] = "suspend"
            object["subscriber"] = .string(name)
        case .resume(let name):
            object["type"] = "resume"
            object["subscriber"] = .string(name)
        case .unsubscribe(let name):
            object["type"] = "unsubscribe"
            object["subscriber"] = .string(name)
        }
        return JSONValue.object(object).jsonText
    }
}
