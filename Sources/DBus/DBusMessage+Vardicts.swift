import CDBus

extension DBusMessage {
    /// Appends one argument of type `aa{sv}`: `dictionaries`, each an array of string keys and
    /// basic values, written straight through libdbus's iterators. The same message as
    /// `append([.array(elementSignature: "a{sv}", dictionaries.map { .vardict($0) })])`, without
    /// building that tree of values and checking it whole: a service that sends such a signal to
    /// each of many subscribers spends on the message alone.
    /// - Throws: `DBusError` (`InvalidArgs`) for a value that is not basic or a text with NUL.
    func appendVardicts(_ dictionaries: [[(String, DBusValue)]]) throws(DBusError) {
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(pointer, &iter)
        let ok = try Self.container(&iter, NOTIFYBUS_DBUS_TYPE_ARRAY, "a{sv}") { (array: inout DBusMessageIter) throws(DBusError) in
            for entries in dictionaries {
                let made = try Self.container(&array, NOTIFYBUS_DBUS_TYPE_ARRAY, "{sv}") { (dictionary: inout DBusMessageIter) throws(DBusError) in
                    for (key, value) in entries { try Self.appendEntry(key, value, to: &dictionary) }
                }
                if !made { throw .noMemory }
            }
        }
        if !ok { throw .noMemory }
    }

    /// Appends one `{sv}` entry: `key`, and `value` (basic) in a variant.
    private static func appendEntry(_ key: String, _ value: DBusValue, to dictionary: inout DBusMessageIter) throws(DBusError) {
        if containsNUL(key) { throw .invalidArgs("a dictionary key contains NUL") }
        switch value {
        case .array, .dictionary, .structure, .variant:
            throw .invalidArgs("'\(key)' holds a '\(value.signature)', not a basic value")
        default:
            try value.validate()
        }
        let made = try container(&dictionary, NOTIFYBUS_DBUS_TYPE_DICT_ENTRY, nil) { (entry: inout DBusMessageIter) throws(DBusError) in
            try write(.string(key), to: &entry)
            let wrapped = try container(&entry, NOTIFYBUS_DBUS_TYPE_VARIANT, value.signature) { (variant: inout DBusMessageIter) throws(DBusError) in
                try write(value, to: &variant)
            }
            if !wrapped { throw .noMemory }
        }
        if !made { throw .noMemory }
    }
}

extension DBusConnection {
    /// Emits the signal `interface.member` from `path` whose one argument is an `aa{sv}` of
    /// basic values (`DBusMessage.appendVardicts`): broadcast, or unicast to `destination`.
    /// - Throws: `DBusError`: `InvalidArgs` for what cannot be sent, `NoMemory`, `Disconnected`
    ///   when not connected.
    public func emitSignal(
        path: ObjectPath, interface: InterfaceName, member: MemberName, vardicts: [[(String, DBusValue)]],
        destination: BusName? = nil
    ) throws(DBusError) {
        try emitSignal(path: path, interface: interface, member: member, destination: destination) {
            (message) throws(DBusError) in try message.appendVardicts(vardicts)
        }
    }
}
