package import Mosquitto
package import NotifyBus

/// Which hosts and keys `notifywatch --mqtt` watches: `HOST/PATTERN`, HOST a host id or `*`
/// (specification: Publishing a fleet to MQTT).
package struct FleetSelection: Sendable, Hashable {
    /// A host id, or `*` for every host.
    package var host: String
    /// The keys.
    package var pattern: KeyPattern

    /// Every key of every host: `*/**`.
    package static let everything = FleetSelection(host: "*", pattern: .all)

    /// A selection.
    package init(host: String, pattern: KeyPattern) {
        self.host = host
        self.pattern = pattern
    }

    /// Reads `HOST/PATTERN`; a lone `HOST` means all its keys.
    /// - Throws: `MQTTConfigurationError` for a host that cannot be a topic level or a pattern
    ///   with an empty segment.
    package init(parsing text: String) throws(MQTTConfigurationError) {
        let host: String
        let pattern: String
        if let slash = text.firstIndex(of: "/") {
            host = String(text[..<slash])
            pattern = String(text[text.index(after: slash)...])
        } else {
            host = text
            pattern = "**"
        }
        if host != "*", let problem = MQTTTopic.hostIDProblem(host) {
            throw MQTTConfigurationError("\"\(text)\": \(problem) (write HOST/PATTERN, HOST an id or *)")
        }
        if let problem = KeyPattern.emptySegmentProblem(in: pattern) {
            throw MQTTConfigurationError("\"\(text)\": \(problem)")
        }
        self.init(host: host, pattern: KeyPattern(pattern))
    }

    /// The subscription filters under `prefix` that bring its hosts' availability and its keys
    /// (possibly more).
    package func filters(prefix: String) -> [String] {
        let hostLevel = host == "*" ? "+" : host
        // Availability first: a host's `source` line then comes before its values.
        return ["\(prefix)/\(hostLevel)/\(MQTTTopic.onlineLevel)", "\(prefix)/\(hostLevel)/\(MQTTTopic.filter(for: pattern))"]
    }

    func matches(host candidate: String) -> Bool { host == "*" || host == candidate }
}

/// What a fleet watcher sees.
package enum FleetEvent: Sendable, Hashable {
    /// The broker connection's status (a `source` line named `mqtt`).
    case broker(status: String, reason: String?)
    /// A host came online or went offline (its retained `$online`).
    case host(String, online: Bool)
    /// A key's message.
    case notification(FleetNotification)
}

/// One key's message from one host, as `notifywatch --mqtt` prints it.
package struct FleetNotification: Sendable, Hashable {
    /// The host id (the topic level after the prefix).
    package var host: String
    /// The key, unescaped.
    package var key: String
    /// Its value.
    package var value: JSONValue
    /// How many events it stands for, as published.
    package var coalesced: Int
    /// The time of its latest event, as published (RFC 3339).
    package var time: String
    /// The value this watcher last received for this host's key, if any.
    package var previous: JSONValue?
    /// Whether it came from the broker's retained store (a current value) rather than live.
    package var retained: Bool

    /// A notification.
    package init(
        host: String, key: String, value: JSONValue, coalesced: Int, time: String, previous: JSONValue?, retained: Bool
    ) {
        self.host = host
        self.key = key
        self.value = value
        self.coalesced = coalesced
        self.time = time
        self.previous = previous
        self.retained = retained
    }
}

/// Turns the broker's messages into `FleetEvent`s: parses topics and payloads (anything may
/// arrive: what is not the link's is skipped), filters by the selections, unescapes keys,
/// remembers each key's previous value and each host's availability, and skips a message
/// whose payload repeats the last one of its topic (a reconnection re-sends the retained ones).
package struct FleetReader: Sendable {
    /// The first topic levels.
    package let prefix: String
    /// The hosts and keys read; what else arrives is skipped.
    package let selections: [FleetSelection]
    private var lastPayloads: [String: [UInt8]] = [:]
    private var values: [String: JSONValue] = [:]
    private var online: [String: Bool] = [:]

    /// The largest message read (the watcher also asks an MQTT 5 broker for nothing larger): a
    /// link's payloads are far smaller (the sources' values are at most 64 KiB of JSON).
    package static let maximumMessageBytes = 1 << 20

    /// A reader of topics under `prefix`.
    package init(prefix: String, selections: [FleetSelection]) {
        self.prefix = prefix
        self.selections = selections.isEmpty ? [.everything] : selections
    }

    /// Every filter to subscribe to, without repeats.
    package var filters: [String] {
        var seen: Set<String> = []
        return selections.flatMap { $0.filters(prefix: prefix) }.filter { seen.insert($0).inserted }
    }

    /// The events `message` stands for (none, or one).
    package mutating func read(_ message: MosquittoMessage) -> FleetEvent? {
        guard message.topic.hasPrefix(prefix + "/"), message.payload.count <= Self.maximumMessageBytes else { return nil }
        let rest = message.topic.dropFirst(prefix.count + 1)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let host = String(rest[..<slash])
        let tail = String(rest[rest.index(after: slash)...])
        guard !host.isEmpty, !tail.isEmpty, selections.contains(where: { $0.matches(host: host) }) else { return nil }
        if tail == MQTTTopic.onlineLevel {
            guard let parsed = try? JSONValue(parsing: message.payload), let isOnline = parsed.boolValue else { return nil }
            guard online[host] != isOnline else { return nil }
            online[host] = isOnline
            return .host(host, online: isOnline)
        }
        let key = MQTTTopic.unescape(tail)
        guard selections.contains(where: { $0.matches(host: host) && $0.pattern.matches(key) }),
              let payload = MQTTPayload(bytes: message.payload)
        else { return nil }
        // The same payload again is the same message: a reconnection's retained copy, a copy per
        // matching subscription (overlapping selections), or a publish sent again after an outage.
        if lastPayloads[message.topic] == message.payload { return nil }
        lastPayloads[message.topic] = message.payload
        let slot = host + "\u{0}" + key
        let previous = values.updateValue(payload.value, forKey: slot)
        return .notification(FleetNotification(
            host: host, key: key, value: payload.value, coalesced: payload.coalesced, time: payload.time,
            previous: previous, retained: message.retained))
    }
}
