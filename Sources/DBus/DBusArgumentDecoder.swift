import CDBus

#if canImport(Glibc)
import Glibc
#endif

/// Reads a message's arguments into `DBusValue`s through libdbus's message iterators
/// (`dbus_message_iter_*`), spending a `DBusDecodingBudget` as it goes: it throws at the first
/// value past the budget, having built no more than the budget allows. An array of a fixed-size
/// type is counted whole before any element is read (`dbus_message_iter_get_fixed_array`).
struct DBusArgumentDecoder {
    private var values: Int
    private var stringBytes: Int
    private let depth: Int
    private let limitsExceeded: String

    init(budget: DBusDecodingBudget, limitsExceeded: String) {
        values = budget.values
        stringBytes = budget.stringBytes
        depth = budget.depth
        self.limitsExceeded = limitsExceeded
    }

    /// The values from `iter` to the end of its container (or of the message).
    mutating func readAll(_ iter: inout DBusMessageIter, level: Int = 0) throws(DBusError) -> [DBusValue] {
        var values: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&iter) != NOTIFYBUS_DBUS_TYPE_INVALID {
            values.append(try read(&iter, level: level))
            dbus_message_iter_next(&iter)
        }
        return values
    }

    /// The entries of the `a{sv}` at `iter`, by key, except those whose variant holds a Unix
    /// file descriptor: their keys are listed apart and the descriptor is never duplicated out
    /// of the message (`GetConnectionCredentials`' `ProcessFD`).
    mutating func readVardictSkippingDescriptors(
        _ iter: inout DBusMessageIter
    ) throws(DBusError) -> (values: [String: DBusValue], descriptorKeys: [String]) {
        guard dbus_message_iter_get_arg_type(&iter) == NOTIFYBUS_DBUS_TYPE_ARRAY,
              dbus_message_iter_get_element_type(&iter) == NOTIFYBUS_DBUS_TYPE_DICT_ENTRY
        else { throw .invalidArgs("expected a dictionary") }
        var entries = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &entries)
        var values: [String: DBusValue] = [:]
        var descriptorKeys: [String] = []
        while dbus_message_iter_get_arg_type(&entries) == NOTIFYBUS_DBUS_TYPE_DICT_ENTRY {
            var entry = DBusMessageIter()
            dbus_message_iter_recurse(&entries, &entry)
            guard let key = try read(&entry, level: 2).stringValue, dbus_message_iter_next(&entry) != 0,
                  dbus_message_iter_get_arg_type(&entry) == NOTIFYBUS_DBUS_TYPE_VARIANT
            else { throw .invalidArgs("expected a dictionary of strings to variants") }
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&entry, &inner)
            if dbus_message_iter_get_arg_type(&inner) == NOTIFYBUS_DBUS_TYPE_UNIX_FD {
                descriptorKeys.append(key)
            } else {
                values[key] = try read(&entry, level: 2)
            }
            dbus_message_iter_next(&entries)
        }
        return (values, descriptorKeys)
    }

    /// The value at `iter`, enclosed by `level` containers.
    private mutating func read(_ iter: inout DBusMessageIter, level: Int) throws(DBusError) -> DBusValue {
        try spend(1)
        let type = dbus_message_iter_get_arg_type(&iter)
        switch type {
        case NOTIFYBUS_DBUS_TYPE_BYTE: return .byte(Self.basic(&iter, UInt8(0)))
        case NOTIFYBUS_DBUS_TYPE_BOOLEAN: return .boolean(Self.basic(&iter, dbus_bool_t(0)) != 0)
        case NOTIFYBUS_DBUS_TYPE_INT16: return .int16(Self.basic(&iter, Int16(0)))
        case NOTIFYBUS_DBUS_TYPE_UINT16: return .uint16(Self.basic(&iter, UInt16(0)))
        case NOTIFYBUS_DBUS_TYPE_INT32: return .int32(Self.basic(&iter, Int32(0)))
        case NOTIFYBUS_DBUS_TYPE_UINT32: return .uint32(Self.basic(&iter, UInt32(0)))
        case NOTIFYBUS_DBUS_TYPE_INT64: return .int64(Self.basic(&iter, Int64(0)))
        case NOTIFYBUS_DBUS_TYPE_UINT64: return .uint64(Self.basic(&iter, UInt64(0)))
        case NOTIFYBUS_DBUS_TYPE_DOUBLE: return .double(Self.basic(&iter, Double(0)))
        case NOTIFYBUS_DBUS_TYPE_STRING: return .string(try text(&iter))
        case NOTIFYBUS_DBUS_TYPE_OBJECT_PATH: return .objectPath(try text(&iter))
        case NOTIFYBUS_DBUS_TYPE_SIGNATURE: return .signature(try text(&iter))
        case NOTIFYBUS_DBUS_TYPE_UNIX_FD:
            // libdbus hands us a duplicate we own: close it, we cannot represent it.
            let fd = Self.basic(&iter, Int32(-1))
            if fd >= 0 { close(fd) }
            throw DBusError(name: DBusError.Name.notSupported, message: "Unix file descriptors ('h') are not supported")
        case NOTIFYBUS_DBUS_TYPE_VARIANT:
            try enter(level)
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            return .variant(try read(&sub, level: level + 1))
        case NOTIFYBUS_DBUS_TYPE_STRUCT:
            try enter(level)
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            return .structure(try readAll(&sub, level: level + 1))
        case NOTIFYBUS_DBUS_TYPE_ARRAY:
            try enter(level)
            return try readArray(&iter, level: level)
        default:
            throw DBusError(name: DBusError.Name.notSupported, message: "unknown D-Bus type code \(type)")
        }
    }

    private mutating func readArray(_ iter: inout DBusMessageIter, level: Int) throws(DBusError) -> DBusValue {
        let elementType = dbus_message_iter_get_element_type(&iter)
        let element = String(Self.currentSignature(&iter).dropFirst())
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &sub)
        if elementType == NOTIFYBUS_DBUS_TYPE_DICT_ENTRY {
            let inner = element.dropFirst().dropLast()
            var entries: [DBusDictionaryEntry] = []
            while dbus_message_iter_get_arg_type(&sub) == NOTIFYBUS_DBUS_TYPE_DICT_ENTRY {
                try spend(1)
                try enter(level + 1)
                var entry = DBusMessageIter()
                dbus_message_iter_recurse(&sub, &entry)
                let key = try read(&entry, level: level + 2)
                dbus_message_iter_next(&entry)
                let value = try read(&entry, level: level + 2)
                entries.append(DBusDictionaryEntry(key: key, value: value))
                dbus_message_iter_next(&sub)
            }
            return .dictionary(keySignature: String(inner.prefix(1)), valueSignature: String(inner.dropFirst()), entries)
        }
        if let elements = try readFixedArray(&sub, elementType) {
            return .array(elementSignature: element, elements)
        }
        return .array(elementSignature: element, try readAll(&sub, level: level + 1))
    }

    /// The elements of an array of a fixed-size type, counted against the budget before any is
    /// built; `nil` for other element types.
    private mutating func readFixedArray(_ sub: inout DBusMessageIter, _ type: Int32) throws(DBusError) -> [DBusValue]? {
        func elements<T: BitwiseCopyable>(_: T.Type, _ make: (T) -> DBusValue) throws(DBusError) -> [DBusValue] {
            var start: UnsafeRawPointer? = nil
            var count: Int32 = 0
            withUnsafeMutablePointer(to: &start) { dbus_message_iter_get_fixed_array(&sub, $0, &count) }
            try spend(Int(count))
            guard let start, count > 0 else { return [] }
            return UnsafeBufferPointer(start: start.assumingMemoryBound(to: T.self), count: Int(count)).map(make)
        }
        switch type {
        case NOTIFYBUS_DBUS_TYPE_BYTE: return try elements(UInt8.self, DBusValue.byte)
        case NOTIFYBUS_DBUS_TYPE_BOOLEAN: return try elements(dbus_bool_t.self) { .boolean($0 != 0) }
        case NOTIFYBUS_DBUS_TYPE_INT16: return try elements(Int16.self, DBusValue.int16)
        case NOTIFYBUS_DBUS_TYPE_UINT16: return try elements(UInt16.self, DBusValue.uint16)
        case NOTIFYBUS_DBUS_TYPE_INT32: return try elements(Int32.self, DBusValue.int32)
        case NOTIFYBUS_DBUS_TYPE_UINT32: return try elements(UInt32.self, DBusValue.uint32)
        case NOTIFYBUS_DBUS_TYPE_INT64: return try elements(Int64.self, DBusValue.int64)
        case NOTIFYBUS_DBUS_TYPE_UINT64: return try elements(UInt64.self, DBusValue.uint64)
        case NOTIFYBUS_DBUS_TYPE_DOUBLE: return try elements(Double.self, DBusValue.double)
        default: return nil
        }
    }

    // MARK: The budget

    private mutating func spend(_ count: Int) throws(DBusError) {
        guard count <= values else {
            throw DBusError(name: limitsExceeded, message: "the arguments hold more values than the budget allows")
        }
        values -= count
    }

    /// Checks that the contents of a container at `level` may be nested one level deeper.
    private func enter(_ level: Int) throws(DBusError) {
        guard level < depth else {
            throw DBusError(name: limitsExceeded, message: "the arguments nest deeper than \(depth) containers")
        }
    }

    /// The text at `iter`, counted against the budget before it is copied.
    private mutating func text(_ iter: inout DBusMessageIter) throws(DBusError) -> String {
        var pointer: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(&iter, &pointer)
        guard let pointer else { return "" }
        let count = strlen(pointer)
        guard count <= stringBytes else {
            throw DBusError(name: limitsExceeded, message: "the arguments hold more text than the budget allows")
        }
        stringBytes -= count
        return pointer.withMemoryRebound(to: UInt8.self, capacity: count) { bytes in
            String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
        }
    }

    private static func basic<T: BitwiseCopyable>(_ iter: inout DBusMessageIter, _ initial: T) -> T {
        var value = initial
        dbus_message_iter_get_basic(&iter, &value)
        return value
    }

    /// The signature of the value at `iter`. Wraps `dbus_message_iter_get_signature`.
    static func currentSignature(_ iter: inout DBusMessageIter) -> String {
        guard let raw = dbus_message_iter_get_signature(&iter) else { return "" }
        defer { dbus_free(raw) }
        return String(cString: raw)
    }
}
