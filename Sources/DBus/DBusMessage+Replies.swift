import CDBus

extension DBusMessage {
    /// Whether the caller asked for no reply. Wraps `dbus_message_get_no_reply`.
    var expectsNoReply: Bool { dbus_message_get_no_reply(pointer) != 0 }

    /// The reply to this method call carrying `values`. Wraps `dbus_message_new_method_return`.
    /// - Throws: `DBusError` (`InvalidArgs`) for values that cannot be sent, `NoMemory`.
    func makeReturn(_ values: [DBusValue]) throws(DBusError) -> DBusMessage {
        guard let made = dbus_message_new_method_return(pointer) else { throw .noMemory }
        let reply = DBusMessage(adopting: made)
        try reply.append(values)
        return reply
    }

    /// The error reply to this method call; `Failed` when `error`'s name is not a valid error
    /// name. Wraps `dbus_message_new_error`.
    func makeError(_ error: DBusError) -> DBusMessage? {
        let name = DBusNames.isValidErrorName(error.name) ? error.name : DBusError.Name.failed
        let text = String(error.message.unicodeScalars.filter { $0 != "\0" })
        let made = name.withCString { name in text.withCString { dbus_message_new_error(pointer, name, $0) } }
        return made.map(DBusMessage.init(adopting:))
    }
}
