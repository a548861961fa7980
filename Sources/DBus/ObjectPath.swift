/// An object path (`/`, `/org/freedesktop/locale1`).
public struct ObjectPath: DBusName {
    /// The text, valid per `dbus_validate_path`.
    public let rawValue: String

    /// The object path `rawValue`, or `nil` when it is not one. Wraps `dbus_validate_path` (through `DBusNames`).
    public init?(rawValue: String) {
        guard DBusNames.isValidObjectPath(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    /// A object path taken from a message libdbus has read (and so validated).
    init(unchecked rawValue: String) {
        self.rawValue = rawValue
    }

    /// `object path`
    public static let kind = "object path"
}

extension ObjectPath {
    /// The bus's own object, `/org/freedesktop/DBus`.
    public static let bus: ObjectPath = "/org/freedesktop/DBus"
}
