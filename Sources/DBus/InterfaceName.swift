/// An interface name (`org.freedesktop.DBus.Properties`).
public struct InterfaceName: DBusName {
    /// The text, valid per `dbus_validate_interface`.
    public let rawValue: String

    /// The interface name `rawValue`, or `nil` when it is not one. Wraps `dbus_validate_interface` (through `DBusNames`).
    public init?(rawValue: String) {
        guard DBusNames.isValidInterface(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    /// A interface name taken from a message libdbus has read (and so validated).
    init(unchecked rawValue: String) {
        self.rawValue = rawValue
    }

    /// `interface name`
    public static let kind = "interface name"
}

extension InterfaceName {
    /// The bus's own interface, `org.freedesktop.DBus`.
    public static let bus: InterfaceName = "org.freedesktop.DBus"
    /// `org.freedesktop.DBus.Properties`: `Get`, `GetAll`, `Set`, `PropertiesChanged`.
    public static let properties: InterfaceName = "org.freedesktop.DBus.Properties"
}
