import CDBus

/// A D-Bus message: a libdbus `DBusMessage`, owned (one reference, released in `deinit`).
///
/// The library makes and reads messages internally; the public part reads a message made
/// from its wire form (`demarshal(_:)`): its header fields and its arguments as `DBusValue`s.
public final class DBusMessage {
    let pointer: OpaquePointer

    /// Takes over a reference the caller owns.
    init(adopting pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit { dbus_message_unref(pointer) }

    /// A method call. Wraps `dbus_message_new_method_call`.
    static func methodCall(
        destination: BusName?, path: ObjectPath, interface: InterfaceName?, member: MemberName
    ) throws(DBusError) -> DBusMessage {
        let made = withOptionalCString(destination?.rawValue) { destination in
            path.rawValue.withCString { path in
                withOptionalCString(interface?.rawValue) { interface in
                    member.rawValue.withCString { member in
                        dbus_message_new_method_call(destination, path, interface, member)
                    }
                }
            }
        }
        guard let made else { throw .noMemory }
        return DBusMessage(adopting: made)
    }

    /// A method call carrying `arguments`, as a caller would send it (the bus sets its sender):
    /// for driving a `DBusDispatcher` without a bus, or to marshal. Wraps
    /// `dbus_message_new_method_call` and `dbus_message_set_no_reply`.
    /// - Throws: `DBusError` (`InvalidArgs`) for values that cannot be sent, `NoMemory`.
    public static func methodCall(
        destination: BusName?, path: ObjectPath, interface: InterfaceName?, member: MemberName,
        arguments: [DBusValue], expectsNoReply: Bool = false
    ) throws(DBusError) -> DBusMessage {
        let message = try methodCall(destination: destination, path: path, interface: interface, member: member)
        try message.append(arguments)
        dbus_message_set_no_reply(message.pointer, expectsNoReply ? 1 : 0)
        return message
    }

    /// A signal. Wraps `dbus_message_new_signal` (and `dbus_message_set_destination` for a unicast one).
    static func signal(
        path: ObjectPath, interface: InterfaceName, member: MemberName, destination: BusName?
    ) throws(DBusError) -> DBusMessage {
        let made = path.rawValue.withCString { path in
            interface.rawValue.withCString { interface in
                member.rawValue.withCString { member in dbus_message_new_signal(path, interface, member) }
            }
        }
        guard let made else { throw .noMemory }
        let message = DBusMessage(adopting: made)
        if let destination {
            guard destination.rawValue.withCString({ dbus_message_set_destination(made, $0) }) != 0 else {
                throw .noMemory
            }
        }
        return message
    }

    /// A copy of the message from `path`, to `destination` (none: a broadcast). Wraps
    /// `dbus_message_copy`: the copy has no serial and can be sent, even when this one was.
    func copy(path: ObjectPath, destination: BusName?) throws(DBusError) -> DBusMessage {
        guard let made = dbus_message_copy(pointer) else { throw .noMemory }
        let message = DBusMessage(adopting: made)
        guard path.rawValue.withCString({ dbus_message_set_path(made, $0) }) != 0,
              withOptionalCString(destination?.rawValue, { dbus_message_set_destination(made, $0) }) != 0
        else { throw .noMemory }
        return message
    }

    /// What kind of message it is.
    public enum Kind: Sendable, Equatable {
        /// A method call.
        case methodCall
        /// A method's reply.
        case methodReturn
        /// An error reply.
        case error
        /// A signal.
        case signal
        /// A message type this library does not know.
        case other
    }

    /// Its kind. Wraps `dbus_message_get_type`.
    public var kind: Kind {
        switch dbus_message_get_type(pointer) {
        case NOTIFYBUS_DBUS_MESSAGE_TYPE_METHOD_CALL: .methodCall
        case NOTIFYBUS_DBUS_MESSAGE_TYPE_METHOD_RETURN: .methodReturn
        case NOTIFYBUS_DBUS_MESSAGE_TYPE_ERROR: .error
        case NOTIFYBUS_DBUS_MESSAGE_TYPE_SIGNAL: .signal
        default: .other
        }
    }

    var type: Int32 { dbus_message_get_type(pointer) }
    /// The sender's serial number of this message. Wraps `dbus_message_get_serial`.
    public var serial: UInt32 { dbus_message_get_serial(pointer) }
    /// The sender's unique name, if the header has one. Wraps `dbus_message_get_sender`.
    public var sender: String? { dbus_message_get_sender(pointer).map { String(cString: $0) } }
    /// The destination, if the header has one. Wraps `dbus_message_get_destination`.
    public var destination: String? { dbus_message_get_destination(pointer).map { String(cString: $0) } }
    /// The object path, if the header has one. Wraps `dbus_message_get_path`.
    public var path: String? { dbus_message_get_path(pointer).map { String(cString: $0) } }
    /// The interface, if the header has one. Wraps `dbus_message_get_interface`.
    public var interface: String? { dbus_message_get_interface(pointer).map { String(cString: $0) } }
    /// The member (method or signal name), if the header has one. Wraps `dbus_message_get_member`.
    public var member: String? { dbus_message_get_member(pointer).map { String(cString: $0) } }
    /// The error name of an error reply. Wraps `dbus_message_get_error_name`.
    public var errorName: String? { dbus_message_get_error_name(pointer).map { String(cString: $0) } }
    /// The signature of the arguments (empty for none). Wraps `dbus_message_get_signature`.
    public var signature: String { dbus_message_get_signature(pointer).map { String(cString: $0) } ?? "" }

    /// The header fields a match rule looks at, or `nil` for a message without a path,
    /// interface or member. libdbus has validated them when it read the message.
    var signalHeader: DBusSignalHeader? {
        guard let path, let interface, let member else { return nil }
        return DBusSignalHeader(
            sender: BusName(unchecked: sender ?? ""), destination: destination.map(BusName.init(unchecked:)),
            path: ObjectPath(unchecked: path), interface: InterfaceName(unchecked: interface),
            member: MemberName(unchecked: member), serial: serial)
    }

    /// The first argument when it is a string or object path (what a rule's `arg0` matches),
    /// read without decoding the others. Wraps `dbus_message_iter_get_basic`.
    public var firstStringArgument: String? { stringArgument(at: 0) }

    /// The argument at `index` when it is a string, object path or signature (what a rule's
    /// `argN` matches), read without decoding any other (`dbus_message_iter_next` skips them).
    func stringArgument(at index: Int) -> String? {
        var iter = DBusMessageIter()
        guard index >= 0, dbus_message_iter_init(pointer, &iter) != 0 else { return nil }
        for _ in 0..<index {
            guard dbus_message_iter_next(&iter) != 0 else { return nil }
        }
        let type = dbus_message_iter_get_arg_type(&iter)
        guard type == NOTIFYBUS_DBUS_TYPE_STRING || type == NOTIFYBUS_DBUS_TYPE_OBJECT_PATH
            || type == NOTIFYBUS_DBUS_TYPE_SIGNATURE
        else { return nil }
        var text: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(&iter, &text)
        return text.map { String(cString: $0) } ?? ""
    }

    /// Whether this is the signal `interface.member` on `path`.
    func isSignal(path: String, interface: String, member: String) -> Bool {
        path.withCString { path in
            interface.withCString { interface in
                member.withCString { member in
                    dbus_message_is_signal(pointer, interface, member) != 0 && dbus_message_has_path(pointer, path) != 0
                }
            }
        }
    }

    /// The arguments, decoded (libdbus's message iterators, `dbus_message_iter_*`), whatever
    /// their size: for a message from a peer that may be hostile, use
    /// `arguments(within:limitsExceeded:)`.
    /// - Throws: `DBusError` (`NotSupported`) for a Unix file descriptor, anywhere in the message.
    public func arguments() throws(DBusError) -> [DBusValue] {
        try arguments(within: .unlimited, limitsExceeded: .limitsExceeded)
    }

    /// The arguments, decoded within `budget` (libdbus's message iterators,
    /// `dbus_message_iter_*`): decoding stops at the first value past it.
    /// - Throws: `DBusError` named `limitsExceeded` past the budget; `NotSupported` for a Unix
    ///   file descriptor, anywhere in the message.
    public func arguments(within budget: DBusDecodingBudget, limitsExceeded: ErrorName) throws(DBusError) -> [DBusValue] {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(pointer, &iter) != 0 else { return [] }
        var decoder = DBusArgumentDecoder(budget: budget, limitsExceeded: limitsExceeded.rawValue)
        return try decoder.readAll(&iter)
    }

    /// The first argument, an `a{sv}`, by key, leaving out the entries whose variant holds a Unix
    /// file descriptor (their keys are listed apart; the descriptor stays in the message).
    /// - Throws: `DBusError` (`InvalidArgs`) when the first argument is not an `a{sv}`.
    func vardictSkippingDescriptors() throws(DBusError) -> (values: [String: DBusValue], descriptorKeys: [String]) {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(pointer, &iter) != 0 else { throw .invalidArgs("expected a dictionary") }
        var decoder = DBusArgumentDecoder(budget: .unlimited, limitsExceeded: DBusError.Name.limitsExceeded)
        return try decoder.readVardictSkippingDescriptors(&iter)
    }

    /// Appends `values` as arguments (after validating them).
    func append(_ values: [DBusValue]) throws(DBusError) {
        for value in values { try value.validate() }
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(pointer, &iter)
        for value in values { try Self.write(value, to: &iter) }
    }

    /// For an error reply: the error it carries (name, and the first argument when it is a string).
    public func error() -> DBusError {
        let name = errorName ?? DBusError.Name.failed
        let text = (try? arguments())?.first?.stringValue ?? ""
        return DBusError(name: name, message: text)
    }

    // MARK: Writing

    static func write(_ value: DBusValue, to iter: inout DBusMessageIter) throws(DBusError) {
        let ok: Bool
        switch value {
        case .byte(let v): ok = appendBasic(&iter, NOTIFYBUS_DBUS_TYPE_BYTE, v)
        case .boolean(let v): ok = appendBasic(&iter, NOTIFYBUS_DBUS_TYPE_BOOLEAN, dbus_bool_t(v ? 1 : 0))
        case .int16(let v): ok = appendBasic(&iter, NOTIFYBUS_DBUS_TYPE_INT16, v)
        case .uint16(let v): ok = appendBasic(&iter, NOTIFYBUS_DBUS_TYPE_UINT16, v)
        case .int32(let v): ok = appendBasic(&iter, NOTIFYBUS_DBUS_TYPE_INT32, v)
        case .uint32(let v): ok = appendBasic(&iter, NOTIFYBUS_DBUS_TYPE_UINT32, v)
        case .int64(let v): ok = appendBasic(&iter, NOTIFYBUS_DBUS_TYPE_INT64, v)
        case .uint64(let v): ok = appendBasic(&iter, NOTIFYBUS_DBUS_TYPE_UINT64, v)
        case .double(let v): ok = appendBasic(&iter, NOTIFYBUS_DBUS_TYPE_DOUBLE, v)
        case .string(let s): ok = appendText(&iter, NOTIFYBUS_DBUS_TYPE_STRING, s)
        case .objectPath(let s): ok = appendText(&iter, NOTIFYBUS_DBUS_TYPE_OBJECT_PATH, s)
        case .signature(let s): ok = appendText(&iter, NOTIFYBUS_DBUS_TYPE_SIGNATURE, s)
        case .variant(let inner):
            ok = try container(&iter, NOTIFYBUS_DBUS_TYPE_VARIANT, inner.signature) { (sub: inout DBusMessageIter) throws(DBusError) in
                try write(inner, to: &sub)
            }
        case .structure(let fields):
            ok = try container(&iter, NOTIFYBUS_DBUS_TYPE_STRUCT, nil) { (sub: inout DBusMessageIter) throws(DBusError) in
                for field in fields { try write(field, to: &sub) }
            }
        case .array(let element, let values):
            ok = try container(&iter, NOTIFYBUS_DBUS_TYPE_ARRAY, element) { (sub: inout DBusMessageIter) throws(DBusError) in
                for element in values { try write(element, to: &sub) }
            }
        case .dictionary(let key, let valueType, let entries):
            ok = try container(&iter, NOTIFYBUS_DBUS_TYPE_ARRAY, "{" + key + valueType + "}") { (sub: inout DBusMessageIter) throws(DBusError) in
                for entry in entries {
                    let entryOK = try container(&sub, NOTIFYBUS_DBUS_TYPE_DICT_ENTRY, nil) { (pair: inout DBusMessageIter) throws(DBusError) in
                        try write(entry.key, to: &pair)
                        try write(entry.value, to: &pair)
                    }
                    if !entryOK { throw .noMemory }
                }
            }
        }
        if !ok { throw .noMemory }
    }

    private static func appendBasic<T: BitwiseCopyable>(_ iter: inout DBusMessageIter, _ type: Int32, _ value: T) -> Bool {
        var value = value
        return dbus_message_iter_append_basic(&iter, type, &value) != 0
    }

    private static func appendText(_ iter: inout DBusMessageIter, _ type: Int32, _ text: String) -> Bool {
        text.withCString { pointer in
            var pointer: UnsafePointer<CChar>? = pointer
            return dbus_message_iter_append_basic(&iter, type, &pointer) != 0
        }
    }

    /// Opens a container, fills it, closes it (or abandons it when filling fails).
    static func container(
        _ iter: inout DBusMessageIter, _ type: Int32, _ signature: String?,
        _ fill: (inout DBusMessageIter) throws(DBusError) -> Void
    ) throws(DBusError) -> Bool {
        var sub = DBusMessageIter()
        let opened = withOptionalCString(signature) { dbus_message_iter_open_container(&iter, type, $0, &sub) }
        guard opened != 0 else { return false }
        do {
            try fill(&sub)
        } catch {
            dbus_message_iter_abandon_container(&iter, &sub)
            throw error
        }
        return dbus_message_iter_close_container(&iter, &sub) != 0
    }
}

/// Calls `body` with a C string for `text`, or `nil`.
func withOptionalCString<R>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let text else { return body(nil) }
    return text.withCString { body($0) }
}
