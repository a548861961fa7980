/// The header fields of a received signal: what a match rule is checked against before any
/// argument is decoded.
struct DBusSignalHeader {
    /// The sender's unique name (empty on a connection without a bus).
    var sender: BusName
    /// The destination of a unicast signal.
    var destination: BusName?
    var path: ObjectPath
    var interface: InterfaceName
    var member: MemberName
    /// The sender's serial number of the message.
    var serial: UInt32
}
