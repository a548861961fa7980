import OrderedCollections

/// A JSON object: members in the order they were first written, each name once.
///
/// Members live in an `OrderedDictionary`, so looking one up by name, adding one and
/// comparing two objects take time linear in the member count at most, never quadratic.
/// Equality ignores order, as JSON does; printing keeps it.
public struct JSONObject: Sendable, Hashable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    /// One member: its name and its value.
    public typealias Member = (key: String, value: JSONValue)
    private var members: OrderedDictionary<String, JSONValue> = [:]

    /// An empty object.
    public init() {}

    /// Builds an object; a repeated name keeps its first position and its last value.
    public init(_ members: some Sequence<(String, JSONValue)>) {
        for (k, v) in members { self.members[k] = v }
    }

    /// Builds an object from a literal; a repeated name keeps its first position and its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self.init(elements) }

    /// The position of the first member.
    public var startIndex: Int { 0 }
    /// The position past the last member.
    public var endIndex: Int { members.count }
    /// The member at `position`, in order.
    public subscript(position: Int) -> Member {
        let element = members.elements[position]
        return (element.key, element.value)
    }

    /// The member's value; setting `nil` removes it, setting a new name appends it.
    public subscript(key: String) -> JSONValue? {
        get { members[key] }
        set { members[key] = newValue }
    }

    /// The member names in order.
    public var keys: [String] { Array(members.keys) }

    /// Whether both objects hold the same names with equal values, in any order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.members.count == rhs.members.count else { return false }
        for (k, v) in lhs.members {
            guard let other = rhs.members[k], other == v else { return false }
        }
        return true
    }

    /// Hashes the members without regard to their order, as equality does.
    public func hash(into hasher: inout Hasher) {
        // Order-independent: combine the sum of each member's own hash.
        var sum = 0
        for (k, v) in members {
            var h = Hasher()
            h.combine(k)
            h.combine(v)
            sum &+= h.finalize()
        }
        hasher.combine(members.count)
        hasher.combine(sum)
    }
}
