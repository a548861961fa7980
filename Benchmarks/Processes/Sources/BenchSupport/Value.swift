import CDBusRaw

/// A D-Bus value as the benchmark writes and reads it through libdbus's message iterators.
public indirect enum Value: Equatable {
    case string(String)
    case objectPath(String)
    case int64(Int64)
    case int32(Int32)
    case uint32(UInt32)
    case uint64(UInt64)
    case double(Double)
    case bool(Bool)
    case variant(Value)
    /// An array with its element signature (`"{sv}"` for a dictionary).
    case array(String, [Value])
    case dictEntry(Value, Value)
    case structure([Value])

    /// Its D-Bus signature.
    public var signature: String {
        switch self {
        case .string: "s"
        case .objectPath: "o"
        case .int64: "x"
        case .int32: "i"
        case .uint32: "u"
        case .uint64: "t"
        case .double: "d"
        case .bool: "b"
        case .variant: "v"
        case .array(let element, _): "a" + element
        case .dictEntry(let key, let value): "{" + key.signature + value.signature + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        }
    }

    /// A dictionary of `a{sv}` from `fields`.
    public static func vardict(_ fields: [(String, Value)]) -> Value {
        .array("{sv}", fields.map { .dictEntry(.string($0.0), .variant($0.1)) })
    }

    /// An `as` of `strings`.
    public static func strings(_ strings: [String]) -> Value { .array("s", strings.map(Value.string)) }

    public var stringValue: String? {
        switch self {
        case .string(let text), .objectPath(let text): text
        case .variant(let inner): inner.stringValue
        default: nil
        }
    }

    public var int64Value: Int64? {
        switch self {
        case .int64(let number): number
        case .int32(let number): Int64(number)
        case .uint32(let number): Int64(number)
        case .uint64(let number): Int64(truncatingIfNeeded: number)
        case .variant(let inner): inner.int64Value
        default: nil
        }
    }

    public var elements: [Value] {
        if case .array(_, let elements) = self { return elements }
        return []
    }

    /// The entries of an `a{s…}` dictionary, variants unwrapped.
    public var stringKeyed: [String: Value] {
        var result: [String: Value] = [:]
        for case .dictEntry(.string(let key), let value) in elements {
            if case .variant(let inner) = value { result[key] = inner } else { result[key] = value }
        }
        return result
    }
}

extension Value {
    /// Appends the value at `iterator` (a message's append iterator or a container's).
    public func append(to iterator: inout DBusMessageIter) {
        switch self {
        case .string(let text): appendText(text, type: RAW_DBUS_TYPE_STRING, to: &iterator)
        case .objectPath(let text): appendText(text, type: RAW_DBUS_TYPE_OBJECT_PATH, to: &iterator)
        case .int64(var number): dbus_message_iter_append_basic(&iterator, RAW_DBUS_TYPE_INT64, &number)
        case .int32(var number): dbus_message_iter_append_basic(&iterator, RAW_DBUS_TYPE_INT32, &number)
        case .uint32(var number): dbus_message_iter_append_basic(&iterator, RAW_DBUS_TYPE_UINT32, &number)
        case .uint64(var number): dbus_message_iter_append_basic(&iterator, RAW_DBUS_TYPE_UINT64, &number)
        case .double(var number): dbus_message_iter_append_basic(&iterator, RAW_DBUS_TYPE_DOUBLE, &number)
        case .bool(let flag):
            var number: dbus_bool_t = flag ? 1 : 0
            dbus_message_iter_append_basic(&iterator, RAW_DBUS_TYPE_BOOLEAN, &number)
        case .variant(let inner):
            container(RAW_DBUS_TYPE_VARIANT, signature: inner.signature, in: &iterator) { inner.append(to: &$0) }
        case .array(let element, let values):
            container(RAW_DBUS_TYPE_ARRAY, signature: element, in: &iterator) { child in
                for value in values { value.append(to: &child) }
            }
        case .dictEntry(let key, let value):
            container(RAW_DBUS_TYPE_DICT_ENTRY, signature: nil, in: &iterator) { child in
                key.append(to: &child)
                value.append(to: &child)
            }
        case .structure(let fields):
            container(RAW_DBUS_TYPE_STRUCT, signature: nil, in: &iterator) { child in
                for field in fields { field.append(to: &child) }
            }
        }
    }

    private func appendText(_ text: String, type: Int32, to iterator: inout DBusMessageIter) {
        text.withCString { pointer in
            var argument: UnsafePointer<CChar>? = pointer
            _ = dbus_message_iter_append_basic(&iterator, type, &argument)
        }
    }

    private func container(
        _ type: Int32, signature: String?, in iterator: inout DBusMessageIter, body: (inout DBusMessageIter) -> Void
    ) {
        var child = DBusMessageIter()
        if let signature {
            _ = signature.withCString { dbus_message_iter_open_container(&iterator, type, $0, &child) }
        } else {
            dbus_message_iter_open_container(&iterator, type, nil, &child)
        }
        body(&child)
        dbus_message_iter_close_container(&iterator, &child)
    }

    /// The value at `iterator`, or `nil` past the end (or for a type the benchmark never sends).
    public static func read(_ iterator: inout DBusMessageIter) -> Value? {
        let type = dbus_message_iter_get_arg_type(&iterator)
        switch type {
        case RAW_DBUS_TYPE_STRING, RAW_DBUS_TYPE_OBJECT_PATH:
            var pointer: UnsafePointer<CChar>?
            dbus_message_iter_get_basic(&iterator, &pointer)
            let text = pointer.map { String(cString: $0) } ?? ""
            return type == RAW_DBUS_TYPE_STRING ? .string(text) : .objectPath(text)
        case RAW_DBUS_TYPE_INT64: return .int64(basic(&iterator, Int64(0)))
        case RAW_DBUS_TYPE_INT32: return .int32(basic(&iterator, Int32(0)))
        case RAW_DBUS_TYPE_UINT32: return .uint32(basic(&iterator, UInt32(0)))
        case RAW_DBUS_TYPE_UINT64: return .uint64(basic(&iterator, UInt64(0)))
        case RAW_DBUS_TYPE_DOUBLE: return .double(basic(&iterator, 0.0))
        case RAW_DBUS_TYPE_BOOLEAN: return .bool(basic(&iterator, dbus_bool_t(0)) != 0)
        case RAW_DBUS_TYPE_VARIANT:
            var child = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &child)
            return read(&child).map(Value.variant)
        case RAW_DBUS_TYPE_ARRAY:
            let full = dbus_message_iter_get_signature(&iterator)
            let element = full.map { String(String(cString: $0).dropFirst()) } ?? ""
            dbus_free(full)
            var child = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &child)
            return .array(element, readAll(&child))
        case RAW_DBUS_TYPE_DICT_ENTRY:
            var child = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &child)
            let fields = readAll(&child)
            guard fields.count == 2 else { return nil }
            return .dictEntry(fields[0], fields[1])
        case RAW_DBUS_TYPE_STRUCT:
            var child = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &child)
            return .structure(readAll(&child))
        default:
            return nil
        }
    }

    /// Every value from `iterator` to the end of its container.
    public static func readAll(_ iterator: inout DBusMessageIter) -> [Value] {
        var values: [Value] = []
        while dbus_message_iter_get_arg_type(&iterator) != RAW_DBUS_TYPE_INVALID {
            if let value = read(&iterator) { values.append(value) }
            dbus_message_iter_next(&iterator)
        }
        return values
    }

    private static func basic<T>(_ iterator: inout DBusMessageIter, _ initial: T) -> T {
        var value = initial
        withUnsafeMutablePointer(to: &value) { dbus_message_iter_get_basic(&iterator, $0) }
        return value
    }
}
