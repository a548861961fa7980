import CDBus

/// Where the answer to a method call goes: what a reply needs of the call, so that the call's
/// message can be let go while the answer is worked out (libdbus counts the messages kept
/// against the bytes it reads ahead, `Configuration.maximumReceivedSize`).
struct DBusReplyAddress {
    /// The caller's unique name.
    let destination: String?
    /// The call's serial.
    let serial: UInt32
    /// Whether the caller asked for no reply.
    let expectsNoReply: Bool
    /// The method's name, for the messages of errors.
    let member: String?
}

extension DBusMessage {
    /// Whether the caller asked for no reply. Wraps `dbus_message_get_no_reply`.
    var expectsNoReply: Bool { dbus_message_get_no_reply(pointer) != 0 }

    /// Where the answer to this method call goes.
    var replyAddress: DBusReplyAddress {
        DBusReplyAddress(destination: sender, serial: serial, expectsNoReply: expectsNoReply, member: member)
    }

    /// The reply to the call at `address` carrying `values`, or the error reply carrying `error`
    /// (`Failed` when `error`'s name is not a valid error name; `Failed` too when the values
    /// cannot be sent). Wraps `dbus_message_new`, `dbus_message_set_reply_serial`,
    /// `dbus_message_set_destination` and `dbus_message_set_error_name`.
    static func answer(to address: DBusReplyAddress, _ result: Result<[DBusValue], DBusError>) -> DBusMessage? {
        if case .success(let values) = result {
            if let reply = reply(to: address, type: NOTIFYBUS_DBUS_MESSAGE_TYPE_METHOD_RETURN), (try? reply.append(values)) != nil {
                return reply
            }
            return answer(to: address, .failure(DBusError(
                name: DBusError.Name.failed, message: "\(address.member ?? "the method") answered values that cannot be sent")))
        }
        guard case .failure(let error) = result, let reply = reply(to: address, type: NOTIFYBUS_DBUS_MESSAGE_TYPE_ERROR) else {
            return nil
        }
        let name = DBusNames.isValidErrorName(error.name) ? error.name : DBusError.Name.failed
        guard name.withCString({ dbus_message_set_error_name(reply.pointer, $0) }) != 0 else { return nil }
        let text = String(error.message.unicodeScalars.filter { $0 != "\0" })
        guard (try? reply.append([.string(text)])) != nil else { return nil }
        return reply
    }

    /// An empty message of `type` answering the call at `address`.
    private static func reply(to address: DBusReplyAddress, type: Int32) -> DBusMessage? {
        guard let made = dbus_message_new(type) else { return nil }
        let reply = DBusMessage(adopting: made)
        dbus_message_set_no_reply(made, 1)
        guard dbus_message_set_reply_serial(made, address.serial) != 0,
              withOptionalCString(address.destination, { dbus_message_set_destination(made, $0) }) != 0
        else { return nil }
        return reply
    }
}
