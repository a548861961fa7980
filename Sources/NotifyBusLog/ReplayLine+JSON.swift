import NotifyBus

extension SubscriptionEvent {
    /// The event as one line of `notifywatch --json` output (CONTRACT.md §3).
    ///
    /// - Parameters:
    ///   - t: the `t` field: log seconds in a replay, seconds since start when live.
    ///   - subscriber: the subscriber's name.
    ///   - time: the `time` field (RFC 3339) of a live notification; `nil` in a replay.
    public func contractJSON(t: JSONValue, subscriber: String, time: String? = nil) -> String {
        var object: JSONObject
        switch self {
        case .notification(let n):
            object = ["type": "notification", "t": t]
            if let time { object["time"] = .string(time) }
            object["subscriber"] = .string(subscriber)
            object["key"] = .string(n.key)
            object["value"] = n.value
            object["coalesced"] = .integer(Int64(n.coalesced))
            if let previous = n.previous { object["previous"] = previous }
        case .suspended:
            object = ["type": "suspended", "t": t, "subscriber": .string(subscriber)]
        case .resumed(_, let flushed):
            object = ["type": "resumed", "t": t, "subscriber": .string(subscriber), "flushed": .integer(Int64(flushed))]
        case .resync(_, let reason):
            object = ["type": "resync", "t": t, "subscriber": .string(subscriber), "reason": .string(reason.rawValue)]
        }
        return JSONValue.object(object).jsonText
    }
}

extension ReplayLine {
    /// The line as `notifywatch replay --json` prints it.
    public var jsonText: String { event.contractJSON(t: t.json, subscriber: subscriber) }
}
