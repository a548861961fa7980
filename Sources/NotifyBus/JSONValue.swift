/// A value published for a key: any JSON value, typed.
///
/// Numbers keep the form they were written in: an integer stays an `.integer`
/// (and prints as `1`), a number with a fraction or exponent is a `.number`
/// (and prints as `1.5`). Equality is semantic, as in JSON: `1` equals `1.0`,
/// and two objects are equal when they hold the same members in any order.
///
/// Literals make values: `"charging"`, `0.42`, `true`, `nil` (JSON `null`),
/// `["level": 10, "unit": "lux"]`.
public enum JSONValue: Sendable {
    /// JSON `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number written without fraction or exponent that fits in 64 bits.
    case integer(Int64)
    /// Any other number. Never NaN or infinite when it came from JSON text.
    case number(Double)
    /// A string.
    case string(String)
    /// An array of values, in order.
    case array([JSONValue])
    /// An object: named members, in the order they were written.
    case object(JSONObject)
}

extension JSONValue {
    /// The number as a `Double`, for `.integer` and `.number`; `nil` otherwise.
    public var doubleValue: Double? {
        switch self {
        case .integer(let i): return Double(i)
        case .number(let d): return d
        default: return nil
        }
    }

    /// The string, for `.string`; `nil` otherwise.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The Boolean, for `.bool`; `nil` otherwise.
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The member named `key`, for `.object`; `nil` otherwise or when absent.
    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }
}

extension JSONValue: Equatable {
    /// Whether two values are equal as JSON: `1` equals `1.0`, objects compare without order.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.integer(a), .integer(b)): return a == b
        case let (.number(a), .number(b)): return a == b
        case let (.integer(a), .number(b)), let (.number(b), .integer(a)):
            return Double(a) == b && Int64(exactly: b) == a
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)): return a == b
        default: return false
        }
    }
}

extension JSONValue: Hashable {
    /// Hashes the value consistently with `==`: `1` and `1.0` hash alike, objects without order.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0 as UInt8)
        case .bool(let b): hasher.combine(1 as UInt8); hasher.combine(b)
        case .integer(let i): hasher.combine(2 as UInt8); hasher.combine(i)
        case .number(let d):
            // Integral doubles hash like the integer they equal.
            if let i = Int64(exactly: d) {
                hasher.combine(2 as UInt8); hasher.combine(i)
            } else {
                hasher.combine(3 as UInt8); hasher.combine(d)
            }
        case .string(let s): hasher.combine(4 as UInt8); hasher.combine(s)
        case .array(let a): hasher.combine(5 as UInt8); hasher.combine(a)
        case .object(let o): hasher.combine(6 as UInt8); hasher.combine(o)
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// `nil` as a value: JSON `null` (``null``).
    public init(nilLiteral: ()) { self = .null }
    /// `true` or `false` as a value (``bool(_:)``).
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An integer literal as a value (``integer(_:)``).
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// A floating-point literal as a value (``number(_:)``).
    public init(floatLiteral value: Double) { self = .number(value) }
    /// A string literal as a value (``string(_:)``).
    public init(stringLiteral value: String) { self = .string(value) }
    /// An array literal as a value (``array(_:)``).
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// A dictionary literal as a value (``object(_:)``), members in the order written.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements))
    }
}

extension JSONValue: CustomStringConvertible {
    /// The value as compact JSON text.
    public var description: String { jsonText }
}

/// A JSON object: members in the order they were first written, each name once.
///
/// Equality ignores order, as JSON does; printing keeps it.
public struct JSONObject: Sendable, Hashable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    /// One member: its name and its value.
    public typealias Member = (key: String, value: JSONValue)
    private var members: [Member] = []

    /// An empty object.
    public init() {}

    /// Builds an object; a repeated name keeps its first position and its last value.
    public init(_ members: some Sequence<(String, JSONValue)>) {
        for (k, v) in members { self[k] = v }
    }

    /// Builds an object from a dictionary literal, as ``init(_:)`` does.
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self.init(elements) }

    /// The position of the first member.
    public var startIndex: Int { members.startIndex }
    /// The position after the last member.
    public var endIndex: Int { members.endIndex }
    /// The member at `position`, in the order the members were written.
    public subscript(position: Int) -> Member { members[position] }

    /// The member's value; setting `nil` removes it, setting a new name appends it.
    public subscript(key: String) -> JSONValue? {
        get { members.first(where: { $0.key == key })?.value }
        set {
            if let i = members.firstIndex(where: { $0.key == key }) {
                if let newValue { members[i].value = newValue } else { members.remove(at: i) }
            } else if let newValue {
                members.append((key, newValue))
            }
        }
    }

    /// The member names in order.
    public var keys: [String] { members.map(\.key) }

    /// Whether two objects hold the same members, in any order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for (k, v) in lhs.members where rhs[k] != v { return false }
        return true
    }

    /// Hashes the members without regard to their order, consistently with `==`.
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
