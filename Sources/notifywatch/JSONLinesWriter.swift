import NotifyBus
import NotifyBusSources

/// The one writer of the JSON lines (specification: notifywatch output): `notification`, `suspended`, `resumed`,
/// `resync` and `source`, and the per-source objects of `sources --json`.
///
/// Each method appends one line's bytes (without the newline) to a caller's buffer, so the line
/// goes out in one `write(2)` from `OutputStream`. Member names are fixed ASCII and are written
/// as they are; every value goes through `JSONValue`'s serializer (`write(to:)`,
/// `writeString(_:to:)`), so numbers keep their JSON form (`1` stays `1`, `1.0` stays `1.0`).
struct JSONLinesWriter {
    /// Text of the value being written, kept to reuse its storage from one value to the next.
    private var scratch = ""

    /// Appends `event` as a line.
    /// - Parameters:
    ///   - t: the `t` member: log seconds in a replay, seconds since start when live.
    ///   - subscriber: the subscriber's name.
    ///   - time: the `time` member (RFC 3339) of a live notification; `nil` in a replay.
    mutating func encode(
        _ event: SubscriptionEvent, t: JSONValue, subscriber: String, time: String? = nil,
        into out: inout [UInt8]
    ) {
        switch event {
        case .notification(let n):
            begin("notification", t: t, into: &out)
            if let time { member(",\"time\":", string: time, into: &out) }
            member(",\"subscriber\":", string: subscriber, into: &out)
            member(",\"key\":", string: n.key, into: &out)
            member(",\"value\":", n.value, into: &out)
            member(",\"coalesced\":", .integer(Int64(n.coalesced)), into: &out)
            if let previous = n.previous { member(",\"previous\":", previous, into: &out) }
        case .suspended:
            begin("suspended", t: t, into: &out)
            member(",\"subscriber\":", string: subscriber, into: &out)
        case .resumed(_, let flushed):
            begin("resumed", t: t, into: &out)
            member(",\"subscriber\":", string: subscriber, into: &out)
            member(",\"flushed\":", .integer(Int64(flushed)), into: &out)
        case .resync(_, let reason):
            begin("resync", t: t, into: &out)
            member(",\"subscriber\":", string: subscriber, into: &out)
            member(",\"reason\":", string: reason.rawValue, into: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// Appends a `source` line: `source`'s `status` at `t` (with its `reason` unless running).
    mutating func encodeSource(_ source: String, _ status: SourceStatus, t: JSONValue, into out: inout [UInt8]) {
        begin("source", t: t, into: &out)
        sourceMembers(source, status, into: &out)
        out.append(UInt8(ascii: "}"))
    }

    /// Appends the line `sources --json` prints for a source: a `source` object without `t`,
    /// with the key patterns the source publishes under.
    mutating func encodeListing(_ source: String, _ status: SourceStatus, keys: [String], into out: inout [UInt8]) {
        out.append(contentsOf: #"{"type":"source""#.utf8)
        sourceMembers(source, status, into: &out)
        member(",\"keys\":", .array(keys.map { .string($0) }), into: &out)
        out.append(UInt8(ascii: "}"))
    }

    private mutating func sourceMembers(_ source: String, _ status: SourceStatus, into out: inout [UInt8]) {
        member(",\"source\":", string: source, into: &out)
        member(",\"status\":", string: status.name, into: &out)
        if let reason = status.reason { member(",\"reason\":", string: reason, into: &out) }
    }

    /// `{"type":"<type>","t":<t>`; `type` is one of the fixed ASCII names above.
    private mutating func begin(_ type: String, t: JSONValue, into out: inout [UInt8]) {
        out.append(contentsOf: #"{"type":""#.utf8)
        out.append(contentsOf: type.utf8)
        out.append(UInt8(ascii: "\""))
        member(",\"t\":", t, into: &out)
    }

    /// `prefix` (a comma and a member name with its colon), then `value`.
    private mutating func member(_ prefix: StaticString, _ value: JSONValue, into out: inout [UInt8]) {
        append(prefix, into: &out)
        scratch.removeAll(keepingCapacity: true)
        value.write(to: &scratch)
        out.append(contentsOf: scratch.utf8)
    }

    /// `prefix`, then `text` as a JSON string.
    private mutating func member(_ prefix: StaticString, string text: String, into out: inout [UInt8]) {
        append(prefix, into: &out)
        scratch.removeAll(keepingCapacity: true)
        JSONValue.writeString(text, to: &scratch)
        out.append(contentsOf: scratch.utf8)
    }

    private func append(_ text: StaticString, into out: inout [UInt8]) {
        text.withUTF8Buffer { out.append(contentsOf: $0) }
    }
}
