extension DBusMessage {
    /// How many bytes the signal `interface.member` from `path` to `destination` (none: a
    /// broadcast) carrying `arguments` takes on the wire, header included, as a bus receives it
    /// without the sender field the bus adds. Wraps `dbus_message_marshal`.
    /// - Throws: `DBusError` (`InvalidArgs`) for values that cannot be sent, `NoMemory`.
    public static func signalSize(
        path: ObjectPath, interface: InterfaceName, member: MemberName, destination: BusName? = nil,
        arguments: [DBusValue]
    ) throws(DBusError) -> Int {
        let message = try signal(path: path, interface: interface, member: member, destination: destination)
        try message.append(arguments)
        return try message.marshal().count
    }
}
