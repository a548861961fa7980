import CDBusRaw

/// A libdbus message the benchmark owns (one reference, released on deinit).
public final class Message {
    public let handle: OpaquePointer

    public init(owning handle: OpaquePointer) {
        self.handle = handle
    }

    deinit { dbus_message_unref(handle) }

    /// A broadcast signal.
    public static func signal(path: String, interface: String, member: String, _ arguments: [Value]) -> Message {
        let message = Message(owning: dbus_message_new_signal(path, interface, member)!)
        message.append(arguments)
        return message
    }

    /// A signal to one connection (`destination`, a unique name): unicast, as notifybusd sends
    /// `Events`.
    public static func unicastSignal(path: String, interface: String, member: String, destination: String, _ arguments: [Value]) -> Message {
        let message = Message(owning: dbus_message_new_signal(path, interface, member)!)
        dbus_message_set_destination(message.handle, destination)
        message.append(arguments)
        return message
    }

    /// A method call.
    public static func call(
        destination: String, path: String, interface: String, member: String, _ arguments: [Value]
    ) -> Message {
        let message = Message(owning: dbus_message_new_method_call(destination, path, interface, member)!)
        message.append(arguments)
        return message
    }

    /// A method call whose one argument is an `ay` of `count` zero bytes, appended in one go.
    public static func call(
        destination: String, path: String, interface: String, member: String, zeroBytes count: Int
    ) -> Message {
        let message = Message(owning: dbus_message_new_method_call(destination, path, interface, member)!)
        var iterator = DBusMessageIter()
        var array = DBusMessageIter()
        dbus_message_iter_init_append(message.handle, &iterator)
        dbus_message_iter_open_container(&iterator, RAW_DBUS_TYPE_ARRAY, "y", &array)
        let bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeBufferPointer { buffer in
            var base: UnsafePointer<UInt8>? = buffer.baseAddress
            _ = dbus_message_iter_append_fixed_array(&array, RAW_DBUS_TYPE_BYTE, &base, Int32(buffer.count))
        }
        dbus_message_iter_close_container(&iterator, &array)
        return message
    }

    /// A method call whose one argument is an `as` of `count` times `text`, appended directly.
    public static func call(
        destination: String, path: String, interface: String, member: String, repeating text: String, count: Int
    ) -> Message {
        let message = Message(owning: dbus_message_new_method_call(destination, path, interface, member)!)
        var iterator = DBusMessageIter()
        var array = DBusMessageIter()
        dbus_message_iter_init_append(message.handle, &iterator)
        dbus_message_iter_open_container(&iterator, RAW_DBUS_TYPE_ARRAY, "s", &array)
        text.withCString { pointer in
            var argument: UnsafePointer<CChar>? = pointer
            for _ in 0..<count { _ = dbus_message_iter_append_basic(&array, RAW_DBUS_TYPE_STRING, &argument) }
        }
        dbus_message_iter_close_container(&iterator, &array)
        return message
    }

    /// A new message with the same header and body, not yet sent (a sent message cannot be sent
    /// again): `dbus_message_copy`, one copy of the bytes.
    public func copy() -> Message { Message(owning: dbus_message_copy(handle)!) }

    /// The reply to this method call, carrying `arguments`.
    public func reply(_ arguments: [Value]) -> Message {
        let message = Message(owning: dbus_message_new_method_return(handle)!)
        message.append(arguments)
        return message
    }

    /// An error reply to this method call.
    public func error(name: String, text: String) -> Message {
        Message(owning: dbus_message_new_error(handle, name, text)!)
    }

    public func append(_ arguments: [Value]) {
        var iterator = DBusMessageIter()
        dbus_message_iter_init_append(handle, &iterator)
        for argument in arguments { argument.append(to: &iterator) }
    }

    public var arguments: [Value] {
        var iterator = DBusMessageIter()
        guard dbus_message_iter_init(handle, &iterator) != 0 else { return [] }
        return Value.readAll(&iterator)
    }

    /// Its size on the wire, header and body.
    public var size: Int {
        var bytes: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        guard dbus_message_marshal(handle, &bytes, &length) != 0 else { return 0 }
        dbus_free(bytes)
        return Int(length)
    }

    /// The serial of the call this message answers (a reply or an error), else 0.
    public var replySerial: UInt32 { dbus_message_get_reply_serial(handle) }

    /// The error's name, for an error reply.
    public var errorName: String? {
        guard dbus_message_get_type(handle) == RAW_DBUS_MESSAGE_TYPE_ERROR else { return nil }
        return dbus_message_get_error_name(handle).map { String(cString: $0) }
    }

    public var isMethodCall: Bool { dbus_message_get_type(handle) == RAW_DBUS_MESSAGE_TYPE_METHOD_CALL }

    public var interface: String? { dbus_message_get_interface(handle).map { String(cString: $0) } }
    public var member: String? { dbus_message_get_member(handle).map { String(cString: $0) } }
    public var path: String? { dbus_message_get_path(handle).map { String(cString: $0) } }

    public func isSignal(interface: String, member: String) -> Bool {
        dbus_message_is_signal(handle, interface, member) != 0
    }

    /// Whether it is a call of `interface.member`.
    public func isMethodCall(interface: String, member: String) -> Bool {
        dbus_message_is_method_call(handle, interface, member) != 0
    }
}
