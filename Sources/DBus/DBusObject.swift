/// An object exported at one path: the interfaces it implements, and who may call it.
///
/// Export it with `DBusConnection.export(_:)` (or add it to a `DBusDispatcher`). Calls to its
/// path are dispatched to its interfaces' methods; `Introspect`
/// (`org.freedesktop.DBus.Introspectable`) and `Get`, `GetAll` and `Set` (refused: every
/// property is read-only) of `org.freedesktop.DBus.Properties` are answered from the
/// descriptions; libdbus answers `org.freedesktop.DBus.Peer`. For many objects of one kind
/// under a prefix, export one `DBusSubtree` instead. Lives on the connection's loop thread.
public final class DBusObject {
    /// Where it is exported.
    public let path: ObjectPath
    /// The interfaces it implements.
    public let interfaces: [DBusInterface]
    /// Decides from a call's header alone (sender, path, interface, member, signature; never
    /// the arguments) whether the caller may go on: `nil` lets it, an error is the reply,
    /// whatever the member, interface or signature (`Properties` and unknown members included).
    /// `Introspectable` and `Peer` are open to every caller.
    public var authorize: ((DBusCallHeader) -> DBusError?)?

    /// An object at `path` implementing `interfaces`.
    public init(path: ObjectPath, interfaces: [DBusInterface], authorize: ((DBusCallHeader) -> DBusError?)? = nil) {
        self.path = path
        self.interfaces = interfaces
        self.authorize = authorize
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
