/// What the bus knows of the process behind a connection (`GetConnectionCredentials`).
public struct DBusCredentials: Sendable, Hashable {
    /// The Unix process ID (`ProcessID`), when the bus knows it.
    public var processID: UInt32?
    /// The Unix user ID (`UnixUserID`), when the bus knows it.
    public var userID: UInt32?
    /// Whether the bus sent a pidfd for the process (`ProcessFD`, from newer buses; dbus-daemon
    /// 1.14 sends none). This library does not take it: it is closed with the reply.
    public var hasProcessFD: Bool

    /// Credentials with these fields.
    public init(processID: UInt32?, userID: UInt32?, hasProcessFD: Bool) {
        self.processID = processID
        self.userID = userID
        self.hasProcessFD = hasProcessFD
    }
}
