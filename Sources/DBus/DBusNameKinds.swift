/// A bus name: unique (`:1.42`, assigned by the bus) or well-known (`org.freedesktop.locale1`).
public typealias BusName = DBusName<BusNameKind>
/// An object path (`/`, `/org/freedesktop/locale1`).
public typealias ObjectPath = DBusName<ObjectPathKind>
/// An interface name (`org.freedesktop.DBus.Properties`).
public typealias InterfaceName = DBusName<InterfaceNameKind>
/// A member name: a method's or a signal's (`GetAll`, `PropertiesChanged`).
public typealias MemberName = DBusName<MemberNameKind>
/// An error name (`org.freedesktop.DBus.Error.Failed`).
public typealias ErrorName = DBusName<ErrorNameKind>

/// Bus names, checked with `dbus_validate_bus_name` (through `DBusNames`).
public enum BusNameKind: DBusNameKind {
    /// `bus name`
    public static let words = "bus name"
    /// Whether `text` is a valid bus name.
    public static func isValid(_ text: String) -> Bool { DBusNames.isValidBusName(text) }
}

/// Object paths, checked with `dbus_validate_path` (through `DBusNames`).
public enum ObjectPathKind: DBusNameKind {
    /// `object path`
    public static let words = "object path"
    /// Whether `text` is a valid object path.
    public static func isValid(_ text: String) -> Bool { DBusNames.isValidObjectPath(text) }
}

/// Interface names, checked with `dbus_validate_interface` (through `DBusNames`).
public enum InterfaceNameKind: DBusNameKind {
    /// `interface name`
    public static let words = "interface name"
    /// Whether `text` is a valid interface name.
    public static func isValid(_ text: String) -> Bool { DBusNames.isValidInterface(text) }
}

/// Member names, checked with `dbus_validate_member` (through `DBusNames`).
public enum MemberNameKind: DBusNameKind {
    /// `member name`
    public static let words = "member name"
    /// Whether `text` is a valid member name.
    public static func isValid(_ text: String) -> Bool { DBusNames.isValidMember(text) }
}

/// Error names, checked with `dbus_validate_error_name` (through `DBusNames`).
public enum ErrorNameKind: DBusNameKind {
    /// `error name`
    public static let words = "error name"
    /// Whether `text` is a valid error name.
    public static func isValid(_ text: String) -> Bool { DBusNames.isValidErrorName(text) }
}

extension BusName {
    /// The bus itself, `org.freedesktop.DBus`.
    public static let bus: BusName = "org.freedesktop.DBus"

    /// Whether it is a unique name (`:1.42`), which the bus assigns to one connection.
    public var isUnique: Bool { rawValue.hasPrefix(":") }
}

extension ObjectPath {
    /// The bus's own object, `/org/freedesktop/DBus`.
    public static let bus: ObjectPath = "/org/freedesktop/DBus"
}

extension InterfaceName {
    /// The bus's own interface, `org.freedesktop.DBus`.
    public static let bus: InterfaceName = "org.freedesktop.DBus"
    /// `org.freedesktop.DBus.Properties`: `Get`, `GetAll`, `Set`, `PropertiesChanged`.
    public static let properties: InterfaceName = "org.freedesktop.DBus.Properties"
}
