/// An error name (`org.freedesktop.DBus.Error.Failed`).
public struct ErrorName: DBusName {
    /// The text, valid per `dbus_validate_error_name`.
    public let rawValue: String

    /// The error name `rawValue`, or `nil` when it is not one. Wraps `dbus_validate_error_name` (through `DBusNames`).
    public init?(rawValue: String) {
        guard DBusNames.isValidErrorName(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    /// A error name taken from a message libdbus has read (and so validated).
    init(unchecked rawValue: String) {
        self.rawValue = rawValue
    }

    /// `error name`
    public static let kind = "error name"
}
