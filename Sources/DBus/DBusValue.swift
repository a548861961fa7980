/// A D-Bus value of any type, nested to any depth, in both directions (messages read and sent).
///
/// | D-Bus | case |
/// |---|---|
/// | `y` `b` `n` `q` `i` `u` `x` `t` `d` | `.byte` `.boolean` `.int16` `.uint16` `.int32` `.uint32` `.int64` `.uint64` `.double` |
/// | `s` `o` `g` | `.string` `.objectPath` `.signature` |
/// | `aT` | `.array(elementSignature: "T", [...])` |
/// | `a{KV}` | `.dictionary(keySignature: "K", valueSignature: "V", [...])` |
/// | `(…)` | `.structure([...])` |
/// | `v` | `.variant(value)` |
///
/// Arrays and dictionaries carry their element signatures, so an empty one still has a type.
/// Unix file descriptors (`h`) are not supported: a message that carries one cannot be read
/// (`DBusError.Name.notSupported`), and the descriptor is closed.
public indirect enum DBusValue: Sendable, Hashable {
    /// `y`
    case byte(UInt8)
    /// `b`
    case boolean(Bool)
    /// `n`
    case int16(Int16)
    /// `q`
    case uint16(UInt16)
    /// `i`
    case int32(Int32)
    /// `u`
    case uint32(UInt32)
    /// `x`
    case int64(Int64)
    /// `t`
    case uint64(UInt64)
    /// `d`
    case double(Double)
    /// `s` (UTF-8, no NUL)
    case string(String)
    /// `o`
    case objectPath(String)
    /// `g`
    case signature(String)
    /// An array whose elements all have the single complete type `elementSignature`.
    case array(elementSignature: String, [DBusValue])
    /// A dictionary (`a{KV}`): `keySignature` is a basic type, `valueSignature` any single complete type.
    case dictionary(keySignature: String, valueSignature: String, [DBusDictionaryEntry])
    /// A structure of one or more fields.
    case structure([DBusValue])
    /// A value with its type carried along.
    case variant(DBusValue)

    /// The value's D-Bus signature (`s`, `a{sv}`, `(ddd)`, …).
    public var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .array(let element, _): "a" + element
        case .dictionary(let key, let value, _): "a{" + key + value + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }
}

extension DBusValue {
    /// Whether the value's signature is `expected`: `signature == expected`, without building
    /// the signature of an array or a dictionary (the check of every element of an array).
    func hasSignature(_ expected: String) -> Bool {
        switch self {
        case .array(let element, _):
            var rest = expected.utf8[...]
            return rest.popFirst() == UInt8(ascii: "a") && rest.elementsEqual(element.utf8)
        case .dictionary(let key, let value, _):
            let bytes = expected.utf8
            guard bytes.count == key.utf8.count + value.utf8.count + 3 else { return false }
            var rest = bytes[...]
            guard rest.popFirst() == UInt8(ascii: "a"), rest.popFirst() == UInt8(ascii: "{"),
                  rest.popLast() == UInt8(ascii: "}"), rest.starts(with: key.utf8)
            else { return false }
            return rest.dropFirst(key.utf8.count).elementsEqual(value.utf8)
        default:
            return signature == expected
        }
    }
}

/// One entry of a D-Bus dictionary (`a{KV}`).
public struct DBusDictionaryEntry: Sendable, Hashable {
    /// The key, of a basic type.
    public var key: DBusValue
    /// The value.
    public var value: DBusValue

    /// Creates an entry.
    public init(key: DBusValue, value: DBusValue) {
        self.key = key
        self.value = value
    }
}

extension DBusValue {
    /// An array of strings (`as`).
    public static func strings(_ values: [String]) -> DBusValue {
        .array(elementSignature: "s", values.map(DBusValue.string))
    }

    /// A dictionary of strings to variants (`a{sv}`), entries in the order given.
    public static func vardict(_ entries: [(String, DBusValue)]) -> DBusValue {
        .dictionary(
            keySignature: "s", valueSignature: "v",
            entries.map { DBusDictionaryEntry(key: .string($0.0), value: .variant($0.1)) })
    }

    /// The value inside any number of variants (`.variant(.variant(x))` → `x`); others as they are.
    public var unwrapped: DBusValue {
        var value = self
        while case .variant(let inner) = value { value = inner }
        return value
    }

    /// The text of `.string`, `.objectPath` and `.signature` (inside variants too); `nil` otherwise.
    public var stringValue: String? {
        switch unwrapped {
        case .string(let s), .objectPath(let s), .signature(let s): s
        default: nil
        }
    }

    /// The Boolean of `.boolean` (inside variants too); `nil` otherwise.
    public var boolValue: Bool? {
        if case .boolean(let b) = unwrapped { return b }
        return nil
    }

    /// `.double`, or any integer type converted (inside variants too); `nil` otherwise.
    public var doubleValue: Double? {
        switch unwrapped {
        case .double(let d): d
        case .byte(let v): Double(v)
        case .int16(let v): Double(v)
        case .uint16(let v): Double(v)
        case .int32(let v): Double(v)
        case .uint32(let v): Double(v)
        case .int64(let v): Double(v)
        case .uint64(let v): Double(v)
        default: nil
        }
    }

    /// Any integer type that fits in `Int64` (inside variants too); `nil` otherwise.
    public var int64Value: Int64? {
        switch unwrapped {
        case .byte(let v): Int64(v)
        case .int16(let v): Int64(v)
        case .uint16(let v): Int64(v)
        case .int32(let v): Int64(v)
        case .uint32(let v): Int64(v)
        case .int64(let v): v
        case .uint64(let v): Int64(exactly: v)
        default: nil
        }
    }

    /// The elements of an array (inside variants too); `nil` otherwise.
    public var arrayElements: [DBusValue]? {
        if case .array(_, let elements) = unwrapped { return elements }
        return nil
    }

    /// The strings of an `as` (inside variants too); `nil` for any other type.
    public var stringArray: [String]? {
        guard case .array("s", let elements) = unwrapped else { return nil }
        return elements.compactMap(\.stringValue)
    }

    /// The entries of a dictionary (inside variants too); `nil` otherwise.
    public var dictionaryEntries: [DBusDictionaryEntry]? {
        if case .dictionary(_, _, let entries) = unwrapped { return entries }
        return nil
    }

    /// A string-keyed dictionary as `[key: value]`, values as they are (an `a{sv}`'s values stay
    /// variants); `nil` for any other type. A repeated key keeps its last value.
    public var stringKeyedDictionary: [String: DBusValue]? {
        guard case .dictionary(let keyType, _, let entries) = unwrapped, keyType == "s" || keyType == "o" else {
            return nil
        }
        var result: [String: DBusValue] = [:]
        for entry in entries {
            if let key = entry.key.stringValue { result[key] = entry.value }
        }
        return result
    }

    /// Checks that the value can be sent: array elements and dictionary entries match their
    /// signatures, signatures and object paths are valid, strings have no NUL, structures are
    /// not empty.
    /// - Throws: `DBusError` (`InvalidArgs`/`InvalidSignature`) naming what is wrong.
    public func validate() throws(DBusError) {
        switch self {
        case .string(let s):
            if containsNUL(s) { throw .invalidArgs("a string contains NUL") }
        case .objectPath(let p):
            if !DBusNames.isValidObjectPath(p) { throw .invalidArgs("invalid object path '\(p)'") }
        case .signature(let g):
            if !DBusSignatures.isValid(g) {
                throw DBusError(name: DBusError.Name.invalidSignature, message: "invalid signature '\(g)'")
            }
        case .array(let element, let values):
            guard DBusSignatures.isSingleCompleteType(element) else {
                throw DBusError(name: DBusError.Name.invalidSignature, message: "invalid array element signature '\(element)'")
            }
            for value in values {
                guard value.hasSignature(element) else {
                    throw .invalidArgs("array of '\(element)' holds a '\(value.signature)'")
                }
                try value.validate()
            }
        case .dictionary(let key, let valueType, let entries):
            guard DBusSignatures.isBasicType(key), DBusSignatures.isSingleCompleteType(valueType) else {
                throw DBusError(name: DBusError.Name.invalidSignature, message: "invalid dictionary signature 'a{\(key)\(valueType)}'")
            }
            for entry in entries {
                guard entry.key.hasSignature(key), entry.value.hasSignature(valueType) else {
                    throw .invalidArgs("dictionary 'a{\(key)\(valueType)}' holds '\(entry.key.signature)' → '\(entry.value.signature)'")
                }
                try entry.key.validate()
                try entry.value.validate()
            }
        case .structure(let fields):
            if fields.isEmpty { throw .invalidArgs("an empty structure cannot be sent") }
            for field in fields { try field.validate() }
        case .variant(let inner):
            try inner.validate()
        default:
            break
        }
    }
}

extension DBusValue: CustomStringConvertible {
    /// A GVariant-like text form, e.g. `{'a': <uint32 1>}`, for messages and logs.
    public var description: String {
        switch self {
        case .byte(let v): "byte \(v)"
        case .boolean(let v): v ? "true" : "false"
        case .int16(let v): "int16 \(v)"
        case .uint16(let v): "uint16 \(v)"
        case .int32(let v): "\(v)"
        case .uint32(let v): "uint32 \(v)"
        case .int64(let v): "int64 \(v)"
        case .uint64(let v): "uint64 \(v)"
        case .double(let v): "\(v)"
        case .string(let s): "'\(s)'"
        case .objectPath(let p): "objectpath '\(p)'"
        case .signature(let g): "signature '\(g)'"
        case .array(let element, let values):
            values.isEmpty ? "@a\(element) []" : "[" + values.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(let key, let value, let entries):
            entries.isEmpty
                ? "@a{\(key)\(value)} {}"
                : "{" + entries.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case .structure(let fields): "(" + fields.map(\.description).joined(separator: ", ") + ")"
        case .variant(let inner): "<\(inner)>"
        }
    }
}
