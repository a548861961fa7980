package import DBus
package import NotifyBus
package import SystemSupport

/// The elements of an `Events` signal (`aa{sv}`): each one line of the `notifywatch` output as a
/// dictionary, values as JSON text, numbered by `seq`. The daemon encodes a subscription's events
/// with it, and a client decodes them back into the same `SubscriptionEvent`s an in-process bus
/// yields (specification: D-Bus interface, "Events").
package enum EventElements {
    /// The fields of `event`'s element: `type`, `t` (seconds since the daemon started, from
    /// `event`'s time), `time` (RFC 3339, `origin` being the wall-clock time of t = 0), `seq`, and
    /// the fields of its type; a notification has `kind`, `first` and `last` too. Every value is
    /// basic (`s`, `d`, `u`, `t`).
    package static func fields(of event: SubscriptionEvent, seq: UInt64, origin: WallTime) -> [(String, DBusValue)] {
        var fields: [(String, DBusValue)] = []
        fields.reserveCapacity(11)
        func common(_ type: String, _ time: Duration) {
            fields.append(("type", .string(type)))
            fields.append(("t", .double(seconds(time))))
            fields.append(("time", .string(origin.advanced(by: time).rfc3339)))
            fields.append(("seq", .uint64(seq)))
        }
        switch event {
        case .notification(let n):
            common("notification", n.time)
            fields.append(("key", .string(n.key)))
            fields.append(("value", .string(n.value.jsonText)))
            fields.append(("coalesced", .uint32(UInt32(clamping: n.coalesced))))
            if let previous = n.previous { fields.append(("previous", .string(previous.jsonText))) }
            fields.append(("kind", .string(n.kind.wireName)))
            fields.append(("first", .double(seconds(n.firstEventTime))))
            fields.append(("last", .double(seconds(n.lastEventTime))))
        case .suspended(let time):
            common("suspended", time)
        case .resumed(let time, let flushed):
            common("resumed", time)
            fields.append(("flushed", .uint32(UInt32(clamping: flushed))))
        case .resync(let time, let reason):
            common("resync", time)
            fields.append(("reason", .string(reason.rawValue)))
        }
        return fields
    }

    /// The element of `event` (its `fields(of:seq:origin:)` as an `a{sv}`).
    package static func encode(_ event: SubscriptionEvent, seq: UInt64, origin: WallTime) -> DBusValue {
        .vardict(fields(of: event, seq: seq, origin: origin))
    }

    /// The elements of the `Events` signals that carry `events`, numbered from `firstSeq`, as
    /// fields: one signal, or where they would pass `maximumBytes` marshalled, consecutive signals
    /// of at most that many bytes each, in order. An event too large for a signal of its own is
    /// sent alone.
    package static func signals(
        _ events: [SubscriptionEvent], firstSeq: UInt64, origin: WallTime,
        maximumBytes: Int = BusInterface.Limits.signalBytes
    ) -> [[[(String, DBusValue)]]] {
        // What a signal's header (path, interface, member, destination, sender, signature) and the
        // array's own length take, at most.
        let budget = maximumBytes - 1024
        var signals: [[[(String, DBusValue)]]] = []
        var elements: [[(String, DBusValue)]] = []
        var size = 0
        for (offset, event) in events.enumerated() {
            let element = fields(of: event, seq: firstSeq &+ UInt64(offset), origin: origin)
            let elementSize = marshalledSize(element)
            if !elements.isEmpty, size + elementSize > budget {
                signals.append(elements)
                elements = []
                size = 0
            }
            elements.append(element)
            size += elementSize
        }
        if !elements.isEmpty { signals.append(elements) }
        return signals
    }

    /// The arguments of the `Events` signals that carry `events` (see `signals(_:firstSeq:origin:maximumBytes:)`).
    package static func signalArguments(
        _ events: [SubscriptionEvent], firstSeq: UInt64, origin: WallTime,
        maximumBytes: Int = BusInterface.Limits.signalBytes
    ) -> [DBusValue] {
        signals(events, firstSeq: firstSeq, origin: origin, maximumBytes: maximumBytes).map { elements in
            .array(elementSignature: "a{sv}", elements.map { .vardict($0) })
        }
    }

    /// An upper bound of the bytes an element of `fields` takes in a message: its length and
    /// padding, and per entry the padding to 8, the key, the variant's signature, the padding to
    /// its value and the value.
    static func marshalledSize(_ fields: [(String, DBusValue)]) -> Int {
        var size = 8
        for (key, value) in fields {
            let valueSize: Int = switch value {
            case .string(let text): 4 + text.utf8.count + 1
            default: 8
            }
            size += 7 + 4 + key.utf8.count + 1 + 3 + 7 + valueSize
        }
        return size
    }

    /// What an `Events` signal's argument decodes to.
    package struct Decoded: Sendable, Hashable {
        /// Its events, in order.
        package var events: [SubscriptionEvent]
        /// The `seq` of its first element that had one; `nil` when none had.
        package var firstSeq: UInt64?
        /// The `seq` of its last element that had one; `nil` when none had.
        package var lastSeq: UInt64?
        /// What was skipped, in words.
        package var skipped: [String]
    }

    /// Reads the argument of an `Events` signal back into events, in order.
    ///
    /// A notification's `kind`, `first` and `last` are read from the element; where one is
    /// missing (a daemon of version 1), the kind follows from where the notification stands
    /// (after a `resumed` element, flushed; after a `resync`, a resync value; otherwise `coalesced`
    /// 0 is an initial value, 1 a live event and more a collapsed backlog) and the times are its
    /// `t`. Unknown fields are ignored; an element without a known `type`, or a notification whose
    /// value is not JSON, is skipped and reported in `skipped` (its `seq` still counts).
    ///
    /// With an `origin`, times are measured from it (an element's `time` less `origin`), so that
    /// they count from the receiver's start as an in-process bus's times count from the bus's;
    /// without one (or for an element whose `time` cannot be read), they are the daemon's `t`.
    /// `first` and `last` are moved by the same amount as the element's time.
    package static func decode(_ argument: DBusValue, origin: WallTime? = nil) -> Decoded {
        var decoded = Decoded(events: [], firstSeq: nil, lastSeq: nil, skipped: [])
        var context = BusNotification.Kind.live
        for element in argument.arrayElements ?? [] {
            guard let fields = element.stringKeyedDictionary?.mapValues(\.unwrapped),
                  let type = fields["type"]?.stringValue
            else {
                decoded.skipped.append("an element without a type")
                continue
            }
            if case .uint64(let seq)? = fields["seq"] {
                if decoded.firstSeq == nil { decoded.firstSeq = seq }
                decoded.lastSeq = seq
            }
            let daemonTime = duration(seconds: fields["t"]?.doubleValue ?? 0)
            let time = origin.flatMap { origin in
                fields["time"]?.stringValue.flatMap(WallTime.init(rfc3339:)).map { $0.since(origin) }
            } ?? daemonTime
            switch type {
            case "notification":
                guard let key = fields["key"]?.stringValue, let text = fields["value"]?.stringValue,
                      let value = try? JSONValue(parsing: text)
                else {
                    decoded.skipped.append("a notification without a key or a JSON value")
                    continue
                }
                let previous = fields["previous"]?.stringValue.flatMap { try? JSONValue(parsing: $0) }
                let coalesced = Int(clamping: fields["coalesced"]?.int64Value ?? 1)
                let kind = fields["kind"]?.stringValue.flatMap(BusNotification.Kind.init(wireName:))
                    ?? inferredKind(context: context, coalesced: coalesced)
                // The element's own times, on the receiver's scale.
                let shift = time - daemonTime
                let first = fields["first"]?.doubleValue.map { duration(seconds: $0) + shift } ?? time
                let last = fields["last"]?.doubleValue.map { duration(seconds: $0) + shift } ?? time
                decoded.events.append(.notification(BusNotification(
                    key: key, value: value, previous: previous, coalesced: coalesced, firstEventTime: first,
                    lastEventTime: last, time: time, kind: kind)))
            case "suspended":
                context = .live
                decoded.events.append(.suspended(time: time))
            case "resumed":
                context = .flushed
                decoded.events.append(.resumed(time: time, flushed: Int(clamping: fields["flushed"]?.int64Value ?? 0)))
            case "resync":
                context = .resync
                let reason = ResyncReason(rawValue: fields["reason"]?.stringValue ?? "") ?? .limit
                decoded.events.append(.resync(time: time, reason: reason))
            default:
                decoded.skipped.append("an element of unknown type '\(type)'")
            }
        }
        return decoded
    }

    /// The kind of a notification whose element does not say, from where it stands.
    private static func inferredKind(context: BusNotification.Kind, coalesced: Int) -> BusNotification.Kind {
        switch (context, coalesced) {
        case (.flushed, _), (.resync, _): context
        case (_, 0): .initial
        case (_, 1): .live
        default: .collapsed
        }
    }

    /// `seconds` as a duration; zero for what no duration holds (not finite, past ~292 years).
    static func duration(seconds: Double) -> Duration {
        seconds.isFinite && seconds.magnitude < 9_223_372_036 ? .seconds(seconds) : .zero
    }

    /// `duration` in seconds.
    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

extension BusNotification.Kind {
    /// The kind as an element's `kind` field names it: `live`, `flushed`, `collapsed`, `initial`,
    /// `resync`.
    package var wireName: String {
        switch self {
        case .live: "live"
        case .flushed: "flushed"
        case .collapsed: "collapsed"
        case .initial: "initial"
        case .resync: "resync"
        }
    }

    /// The kind an element's `kind` field names; `nil` for a name it does not know.
    package init?(wireName: String) {
        switch wireName {
        case "live": self = .live
        case "flushed": self = .flushed
        case "collapsed": self = .collapsed
        case "initial": self = .initial
        case "resync": self = .resync
        default: return nil
        }
    }
}
