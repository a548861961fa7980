/// A D-Bus error: its name (`org.freedesktop.DBus.Error.ServiceUnknown`) and human-readable message.
///
/// Errors that come from the bus or a peer keep the name they were sent with. Errors made by
/// this library use the standard names of `DBusError.Name` (`NoReply` for a timeout,
/// `Disconnected` when the connection is gone, `InvalidArgs` for a value that cannot be sent).
public struct DBusError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The error name, e.g. `org.freedesktop.DBus.Error.UnknownMethod`.
    public var name: String
    /// What went wrong, in words.
    public var message: String

    /// Creates an error.
    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    /// `name: message`.
    public var description: String { message.isEmpty ? name : "\(name): \(message)" }

    /// Well-known error names.
    public enum Name {
        /// A generic failure.
        public static let failed = "org.freedesktop.DBus.Error.Failed"
        /// No reply within the timeout (or the peer went away before replying).
        public static let noReply = "org.freedesktop.DBus.Error.NoReply"
        /// The connection is closed or the bus went away.
        public static let disconnected = "org.freedesktop.DBus.Error.Disconnected"
        /// A value or name is invalid, or a reply does not have the expected type.
        public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
        /// A signature is invalid.
        public static let invalidSignature = "org.freedesktop.DBus.Error.InvalidSignature"
        /// The bus could not be reached (no socket, refused, bad address).
        public static let noServer = "org.freedesktop.DBus.Error.NoServer"
        /// The address is malformed or unset.
        public static let badAddress = "org.freedesktop.DBus.Error.BadAddress"
        /// libdbus ran out of memory.
        public static let noMemory = "org.freedesktop.DBus.Error.NoMemory"
        /// The destination name has no owner and cannot be activated.
        public static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
        /// The name has no owner (`GetNameOwner`).
        public static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
        /// The method does not exist on the object.
        public static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
        /// The property does not exist.
        public static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
        /// The D-Bus type cannot be represented here (Unix file descriptors).
        public static let notSupported = "org.freedesktop.DBus.Error.NotSupported"
        /// A `DBusProxy` call's reply came from an owner that is no longer the current one.
        public static let ownerChanged = "org.notifybus.DBus.Error.OwnerChanged"
    }

    static func ownerChanged(member: MemberName) -> DBusError {
        DBusError(name: Name.ownerChanged, message: "the owner changed while \(member) was outstanding")
    }

    static func disconnected(_ message: String = "the connection to the bus is closed") -> DBusError {
        DBusError(name: Name.disconnected, message: message)
    }

    static func invalidArgs(_ message: String) -> DBusError {
        DBusError(name: Name.invalidArgs, message: message)
    }

    static let noMemory = DBusError(name: Name.noMemory, message: "libdbus ran out of memory")
}
