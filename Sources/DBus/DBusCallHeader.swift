/// The header of a method call: everything dispatch decides on before any argument is read
/// (the object, the caller's right, the interface, the member, the signature).
///
/// `DBusMessage.callHeader` reads it from a message (libdbus validated each field when it read
/// the message); an object's authorization sees only this, never the arguments.
public struct DBusCallHeader: Sendable, Hashable {
    /// The caller's unique name (`:1.42`); empty on a connection without a bus.
    public var sender: BusName
    /// The object it is sent to.
    public var path: ObjectPath
    /// The interface it names, if it names one.
    public var interface: InterfaceName?
    /// The method's name.
    public var member: MemberName
    /// Its arguments' signature (empty for none).
    public var signature: String
    /// Whether the caller asked for no reply (`NO_REPLY_EXPECTED`): such a call is dispatched
    /// as any other but never answered.
    public var expectsNoReply: Bool
}
