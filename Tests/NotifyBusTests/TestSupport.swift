import NotifyBus

/// A notification reduced to what the delivery rules speak of.
struct Note: Equatable, CustomStringConvertible {
    var key: String
    var value: JSONValue
    var coalesced: Int
    var previous: JSONValue?

    init(_ key: String, _ value: JSONValue, _ coalesced: Int = 1, previous: JSONValue? = nil) {
        self.key = key
        self.value = value
        self.coalesced = coalesced
        self.previous = previous
    }

    init(_ n: BusNotification) { self.init(n.key, n.value, n.coalesced, previous: n.previous) }

    var description: String { "\(key)=\(value) ×\(coalesced)" + (previous.map { " prev \($0)" } ?? "") }
}

extension Subscription {
    /// The notifications ready now.
    func pollNotes() -> [Note] { poll().compactMap(\.notification).map(Note.init) }
}

extension Duration {
    static func s(_ n: Int) -> Duration { .seconds(n) }
}
