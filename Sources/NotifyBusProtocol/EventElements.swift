import DBus
import NotifyBus

/// The elements of an `Events` signal (`aa{sv}`): each one line of CONTRACT.md §3 as a
/// dictionary, values as JSON text. The daemon encodes a subscription's events with it, and a
/// client decodes them back into the same `SubscriptionEvent`s an in-process bus yields.
public enum EventElements {
    /// The element of `event`: `type`, `t` (seconds since the daemon started, from `event`'s
    /// time), `time` (RFC 3339, `origin` being the wall-clock time of t = 0) and the fields of its type.
    public static func encode(_ event: SubscriptionEvent, origin: WallTime) -> DBusValue {
        var fields: [(String, DBusValue)] = []
        func common(_ type: String, _ time: Duration) {
            fields.append(("type", .string(type)))
            fields.append(("t", .double(seconds(time))))
            fields.append(("time", .string(origin.advanced(by: time).rfc3339)))
        }
        switch event {
        case .notification(let n):
            common("notification", n.time)
            fields.append(("key", .string(n.key)))
            fields.append(("value", .string(n.value.jsonText)))
            fields.append(("coalesced", .uint32(UInt32(clamping: n.coalesced))))
            if let previous = n.previous { fields.append(("previous", .string(previous.jsonText))) }
        case .suspended(let time):
            common("suspended", time)
        case .resumed(let time, let flushed):
            common("resumed", time)
            fields.append(("flushed", .uint32(UInt32(clamping: flushed))))
        case .resync(let time, let reason):
            common("resync", time)
            fields.append(("reason", .string(reason.rawValue)))
        }
        return .vardict(fields)
    }

    /// The argument of an `Events` signal carrying `events`.
    public static func signalArgument(_ events: [SubscriptionEvent], origin: WallTime) -> DBusValue {
        .array(elementSignature: "a{sv}", events.map { encode($0, origin: origin) })
    }

    /// Reads the argument of an `Events` signal back into events, in order.
    ///
    /// A notification's kind follows from where it stands: after a `resumed` element, flushed;
    /// after a `resync`, a resync value; otherwise `coalesced` 0 is an initial value, 1 a live
    /// event and more a collapsed backlog. Its first and last event times are its `t`. Unknown
    /// fields are ignored; an element without a known `type`, or a notification whose value is
    /// not JSON, is skipped and reported in `skipped`.
    ///
    /// With an `origin`, times are measured from it (an element's `time` less `origin`), so that
    /// they count from the receiver's start as an in-process bus's times count from the bus's;
    /// without one (or for an element whose `time` cannot be read), they are the daemon's `t`.
    public static func decode(
        _ argument: DBusValue, origin: WallTime? = nil
    ) -> (events: [SubscriptionEvent], skipped: [String]) {
        var events: [SubscriptionEvent] = []
        var skipped: [String] = []
        var context = BusNotification.Kind.live
        for element in argument.arrayElements ?? [] {
            guard let fields = element.stringKeyedDictionary?.mapValues(\.unwrapped),
                  let type = fields["type"]?.stringValue
            else {
                skipped.append("an element without a type")
                continue
            }
            let time = origin.flatMap { origin in
                fields["time"]?.stringValue.flatMap(WallTime.init(rfc3339:)).map { $0.since(origin) }
            } ?? duration(seconds: fields["t"]?.doubleValue ?? 0)
            switch type {
            case "notification":
                guard let key = fields["key"]?.stringValue, let text = fields["value"]?.stringValue,
                      let value = try? JSONValue(parsing: text)
                else {
                    skipped.append("a notification without a key or a JSON value")
                    continue
                }
                let previous = fields["previous"]?.stringValue.flatMap { try? JSONValue(parsing: $0) }
                let coalesced = Int(fields["coalesced"]?.int64Value ?? 1)
                let kind: BusNotification.Kind = switch (context, coalesced) {
                case (.flushed, _), (.resync, _): context
                case (_, 0): .initial
                case (_, 1): .live
                default: .collapsed
                }
                events.append(.notification(BusNotification(
                    key: key, value: value, previous: previous, coalesced: coalesced, firstEventTime: time,
                    lastEventTime: time, time: time, kind: kind)))
            case "suspended":
                context = .live
                events.append(.suspended(time: time))
            case "resumed":
                context = .flushed
                events.append(.resumed(time: time, flushed: Int(fields["flushed"]?.int64Value ?? 0)))
            case "resync":
                context = .resync
                events.append(.resync(time: time, reason: ResyncReason(rawValue: fields["reason"]?.stringValue ?? "") ?? .limit))
            default:
                skipped.append("an element of unknown type '\(type)'")
            }
        }
        return (events, skipped)
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
