public import NotifyBus

/// A `notification` line of notifywatch's `--json` output, reduced to what the delivery rules decide.
public struct Note: Equatable, Hashable, CustomStringConvertible, Sendable {
    public var key: String
    public var value: JSONValue
    public var coalesced: Int
    public var previous: JSONValue?

    public init(_ key: String, _ value: JSONValue, coalesced: Int = 1, previous: JSONValue? = nil) {
        self.key = key
        self.value = value
        self.coalesced = coalesced
        self.previous = previous
    }

    /// The note of a `notification` line; `nil` for any other line.
    public init?(_ line: JSONValue) {
        guard line["type"] == "notification", let key = line["key"]?.stringValue, let value = line["value"],
              let coalesced = line["coalesced"]?.doubleValue
        else { return nil }
        self.init(key, value, coalesced: Int(coalesced), previous: line["previous"])
    }

    public var description: String {
        "\(key)=\(value) ×\(coalesced)\(previous.map { " (was \($0))" } ?? "")"
    }
}
