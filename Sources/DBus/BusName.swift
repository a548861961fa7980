/// A bus name: unique (`:1.42`, assigned by the bus) or well-known (`org.freedesktop.locale1`).
public struct BusName: DBusName {
    /// The text, valid per `dbus_validate_bus_name`.
    public let rawValue: String

    /// The bus name `rawValue`, or `nil` when it is not one. Wraps `dbus_validate_bus_name` (through `DBusNames`).
    public init?(rawValue: String) {
        guard DBusNames.isValidBusName(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    /// A bus name taken from a message libdbus has read (and so validated).
    init(unchecked rawValue: String) {
        self.rawValue = rawValue
    }

    /// `bus name`
    public static let kind = "bus name"
}

extension BusName {
    /// The bus itself, `org.freedesktop.DBus`.
    public static let bus: BusName = "org.freedesktop.DBus"

    /// Whether it is a unique name (`:1.42`), which the bus assigns to one connection.
    public var isUnique: Bool { rawValue.hasPrefix(":") }
}
