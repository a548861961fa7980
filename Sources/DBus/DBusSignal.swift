/// A signal as received.
public struct DBusSignal: Sendable, Hashable {
    /// The sender's unique name (`:1.42`), or `org.freedesktop.DBus` for the bus itself.
    public var sender: String
    /// The destination for a unicast signal (our unique name); `nil` for a broadcast.
    public var destination: String?
    /// The object path it was emitted on.
    public var path: String
    /// Its interface.
    public var interface: String
    /// Its name.
    public var member: String
    /// Its arguments' signature, e.g. `sa{sv}as`.
    public var signature: String
    /// Its arguments.
    public var arguments: [DBusValue]

    /// Creates a signal value.
    public init(
        sender: String, destination: String?, path: String, interface: String, member: String,
        signature: String, arguments: [DBusValue]
    ) {
        self.sender = sender
        self.destination = destination
        self.path = path
        self.interface = interface
        self.member = member
        self.signature = signature
        self.arguments = arguments
    }
}

/// A decoded `org.freedesktop.DBus.Properties.PropertiesChanged` signal.
public struct DBusPropertiesChange: Sendable, Hashable {
    /// The interface whose properties changed.
    public var interface: String
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
              case .string(let interface) = signal.arguments[0],
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
