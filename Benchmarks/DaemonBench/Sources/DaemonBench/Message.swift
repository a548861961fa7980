import CDBusRaw

/// A libdbus message the benchmark owns (one reference, released on deinit).
final class Message {
    let handle: OpaquePointer

    init(owning handle: OpaquePointer) {
        self.handle = handle
    }

    deinit { dbus_message_unref(handle) }

    /// A broadcast signal.
    static func signal(path: String, interface: String, member: String, _ arguments: [Value]) -> Message {
        let message = Message(owning: dbus_message_new_signal(path, interface, member)!)
        message.append(arguments)
        return message
    }

    /// A method call.
    static func call(
        destination: String, path: String, interface: String, member: String, _ arguments: [Value]
    ) -> Message {
        let message = Message(owning: dbus_message_new_method_call(destination, path, interface, member)!)
        message.append(arguments)
        return message
    }

    /// The reply to this method call, carrying `arguments`.
    func reply(_ arguments: [Value]) -> Message {
        let message = Message(owning: dbus_message_new_method_return(handle)!)
        message.append(arguments)
        return message
    }

    /// An error reply to this method call.
    func error(name: String, text: String) -> Message {
        Message(owning: dbus_message_new_error(handle, name, text)!)
    }

    func append(_ arguments: [Value]) {
        var iterator = DBusMessageIter()
        dbus_message_iter_init_append(handle, &iterator)
        for argument in arguments { argument.append(to: &iterator) }
    }

    var arguments: [Value] {
        var iterator = DBusMessageIter()
        guard dbus_message_iter_init(handle, &iterator) != 0 else { return [] }
        return Value.readAll(&iterator)
    }

    var isMethodCall: Bool { dbus_message_get_type(handle) == RAW_DBUS_MESSAGE_TYPE_METHOD_CALL }

    var interface: String? { dbus_message_get_interface(handle).map { String(cString: $0) } }
    var member: String? { dbus_message_get_member(handle).map { String(cString: $0) } }
    var path: String? { dbus_message_get_path(handle).map { String(cString: $0) } }

    func isSignal(interface: String, member: String) -> Bool {
        dbus_message_is_signal(handle, interface, member) != 0
    }
}
