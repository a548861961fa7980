public import NotifyBus

/// A key's retained message (specification: Publishing a fleet to MQTT): `{"value": V, "time": "RFC 3339", "coalesced": N}`,
/// UTF-8 JSON, the value as the bus holds it (numbers in their JSON form).
public struct MQTTPayload: Sendable, Hashable {
    /// The key's value.
    package var value: JSONValue
    /// The time of the latest event the message stands for, as the payload wrote it.
    package var time: String
    /// How many events it stands for (0 for a current value sent without an event).
    package var coalesced: Int

    /// A payload.
    public init(value: JSONValue, time: String, coalesced: Int) {
        self.value = value
        self.time = time
        self.coalesced = coalesced
    }

    /// The payload's bytes.
    public var bytes: [UInt8] {
        var text = #"{"value":"#
        value.write(to: &text)
        text += #","time":"#
        JSONValue.writeString(time, to: &text)
        text += #","coalesced":\#(coalesced)}"#
        return Array(text.utf8)
    }

    /// Reads a payload; `nil` when `bytes` are not a JSON object with a `value` (anything may
    /// arrive from a broker): a missing `time` reads as empty, a missing or odd `coalesced` as 1.
    package init?(bytes: [UInt8]) {
        guard let parsed = try? JSONValue(parsing: bytes), case .object(let object) = parsed,
              let value = object["value"]
        else { return nil }
        self.value = value
        self.time = object["time"]?.stringValue ?? ""
        switch object["coalesced"] {
        case .integer(let count)? where count >= 0 && count <= Int64(Int32.max): self.coalesced = Int(count)
        default: self.coalesced = 1
        }
    }
}
