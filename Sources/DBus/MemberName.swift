/// A member name: a method's or a signal's (`GetAll`, `PropertiesChanged`).
public struct MemberName: DBusName {
    /// The text, valid per `dbus_validate_member`.
    public let rawValue: String

    /// The member name `rawValue`, or `nil` when it is not one. Wraps `dbus_validate_member` (through `DBusNames`).
    public init?(rawValue: String) {
        guard DBusNames.isValidMember(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    /// A member name taken from a message libdbus has read (and so validated).
    init(unchecked rawValue: String) {
        self.rawValue = rawValue
    }

    /// `member name`
    public static let kind = "member name"
}
