/// An object exported on a connection: a path, the interfaces it implements, and who may call it.
///
/// Export it with `DBusConnection.export(_:)`. The connection answers `Introspect`
/// (`org.freedesktop.DBus.Introspectable`) and `Get`, `GetAll` and `Set` (refused: every
/// property is read-only) of `org.freedesktop.DBus.Properties` from the descriptions; libdbus
/// answers `org.freedesktop.DBus.Peer`. Lives on the connection's loop thread.
public final class DBusObject {
    /// Where it is exported.
    public let path: ObjectPath
    /// The interfaces it implements.
    public let interfaces: [DBusInterface]
    /// Decides whether `call` may go ahead, before its method (or `Properties` method) runs:
    /// `nil` lets it, an error is the reply. `Introspect` and `Peer` are open to every caller.
    public var authorize: ((DBusMethodCall) -> DBusError?)?

    /// An object at `path` implementing `interfaces`.
    public init(path: ObjectPath, interfaces: [DBusInterface], authorize: ((DBusMethodCall) -> DBusError?)? = nil) {
        self.path = path
        self.interfaces = interfaces
        self.authorize = authorize
    }

    /// The interface named `name`, if it implements one.
    func interface(_ name: String) -> DBusInterface? {
        interfaces.first { $0.name.rawValue == name }
    }
}

extension InterfaceName {
    /// `org.freedesktop.DBus.Introspectable`: `Introspect`.
    public static let introspectable: InterfaceName = "org.freedesktop.DBus.Introspectable"
    /// `org.freedesktop.DBus.Peer`: `Ping`, `GetMachineId` (answered by libdbus).
    public static let peer: InterfaceName = "org.freedesktop.DBus.Peer"
}

extension DBusError.Name {
    /// The object path has no object (nor objects below it).
    public static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
    /// The object does not implement the interface.
    public static let unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
    /// The property cannot be set.
    public static let propertyReadOnly = "org.freedesktop.DBus.Error.PropertyReadOnly"
    /// The caller may not do this.
    public static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
}
