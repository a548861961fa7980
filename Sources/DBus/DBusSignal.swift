/// A signal as received.
public struct DBusSignal: Sendable, Hashable {
    /// The sender's unique name (`:1.42`), or `org.freedesktop.DBus` for the bus itself.
    public var sender: BusName
    /// The destination for a unicast signal (our unique name); `nil` for a broadcast.
    public var destination: BusName?
    /// The object path it was emitted on.
    public var path: ObjectPath
    /// Its interface.
    public var interface: InterfaceName
    /// Its name.
    public var member: MemberName
    /// Its arguments' signature, e.g. `sa{sv}as`.
    public var signature: String
    /// Its arguments.
    public var arguments: [DBusValue]
    /// The sender's serial number of the message (messages from one sender count up).
    public var serial: UInt32

    /// Creates a signal value.
    public init(
        sender: BusName, destination: BusName?, path: ObjectPath, interface: InterfaceName, member: MemberName,
        signature: String, arguments: [DBusValue], serial: UInt32 = 0
    ) {
        self.sender = sender
        self.destination = destination
        self.path = path
        self.interface = interface
        self.member = member
        self.signature = signature
        self.arguments = arguments
        self.serial = serial
    }

    /// The signal with `header` and `arguments`.
    init(header: DBusSignalHeader, signature: String, arguments: [DBusValue]) {
        self.init(
            sender: header.sender, destination: header.destination, path: header.path, interface: header.interface,
            member: header.member, signature: signature, arguments: arguments, serial: header.serial)
    }
}

/// A decoded `org.freedesktop.DBus.Properties.PropertiesChanged` signal.
public struct DBusPropertiesChange: Sendable, Hashable {
    /// The interface whose properties changed.
    public var interface: InterfaceName
    /// The new values, by property name (the variants unwrapped once).
    public var changed: [String: DBusValue]
    /// Properties that changed without their value being sent: read them with `Get`.
    public var invalidated: [String]
    /// The signal it came from.
    public var signal: DBusSignal

    /// Decodes `signal`.
    /// - Throws: `DBusError` (`InvalidArgs`) when its arguments are not `(s, a{sv}, as)`.
    public init(_ signal: DBusSignal) throws(DBusError) {
        guard signal.arguments.count >= 2,
              case .string(let interfaceText) = signal.arguments[0],
              let interface = InterfaceName(rawValue: interfaceText),
              case .dictionary("s", "v", let entries) = signal.arguments[1]
        else {
            throw .invalidArgs("PropertiesChanged from \(signal.sender) has arguments '\(signal.signature)', expected 'sa{sv}as'")
        }
        var changed: [String: DBusValue] = [:]
        for entry in entries {
            if case .string(let name) = entry.key, case .variant(let value) = entry.value { changed[name] = value }
        }
        var invalidated: [String] = []
        if signal.arguments.count >= 3 {
            guard let names = signal.arguments[2].stringArray else {
                throw .invalidArgs("PropertiesChanged from \(signal.sender) has arguments '\(signal.signature)', expected 'sa{sv}as'")
            }
            invalidated = names
        }
        self.interface = interface
        self.changed = changed
        self.invalidated = invalidated
        self.signal = signal
    }
}
