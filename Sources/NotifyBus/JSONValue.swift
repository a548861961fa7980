/// A value published for a key: any JSON value, typed.
///
/// Numbers keep the form they were written in: an integer stays an `.integer`
/// (and prints as `1`), a number with a fraction or exponent is a `.number`
/// (and prints as `1.5`), and a number that neither holds as written is a `.decimal`
/// that keeps its text (`99999999999999999999`, `1e400`). Equality is semantic, as in
/// JSON: numbers compare by exact value (`1` equals `1.0`), and two objects are equal
/// when they hold the same members in any order.
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
    /// A number written with a fraction or exponent, within `Double`'s range. Never NaN or
    /// infinite when it came from JSON text.
    case number(Double)
    /// A number kept as its text: an integer past 64 bits, or a number past `Double`'s range
    /// or nonzero below its smallest magnitude.
    case decimal(JSONDecimal)
    /// A string.
    case string(String)
    /// An array of values, in order.
    case array([JSONValue])
    /// An object: named members, in the order they were written.
    case object(JSONObject)
}

extension JSONValue {
    /// An unsigned integer: an `.integer` when it fits in `Int64`, else a `.decimal` of its digits.
    public init(_ value: UInt64) {
        if let i = Int64(exactly: value) {
            self = .integer(i)
        } else {
            self = .decimal(JSONDecimal(checked: String(value)))
        }
    }

    /// The number as a `Double`, for `.integer`, `.number` and `.decimal` (the nearest one:
    /// infinite past `Double`'s range); `nil` otherwise.
    public var doubleValue: Double? {
        switch self {
        case .integer(let i): return Double(i)
        case .number(let d): return d
        case .decimal(let n): return n.doubleValue
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
        case let (.decimal(a), .decimal(b)): return a.text == b.text || a.exactValue == b.exactValue
        case let (.decimal(a), .integer(b)), let (.integer(b), .decimal(a)): return a.exactValue == ExactDecimal(b)
        case let (.decimal(a), .number(b)), let (.number(b), .decimal(a)):
            // Only a number that rounds to `b` can equal it; then compare exactly.
            return a.doubleValue == b && ExactDecimal(b) == a.exactValue
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
        case .decimal(let n):
            // As the `.integer` or `.number` it equals, if there is one.
            let exact = n.exactValue
            if let i = exact.int64Value {
                hasher.combine(2 as UInt8); hasher.combine(i)
            } else if case let d = n.doubleValue, ExactDecimal(d) == exact {
                JSONValue.number(d).hash(into: &hasher)
            } else {
                hasher.combine(7 as UInt8); hasher.combine(exact)
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
