/// A method call to an exported object, answered once with `reply(_:)` or `fail(_:)`.
///
/// A call dropped without an answer is answered with `org.freedesktop.DBus.Error.Failed`, so a
/// caller never waits for its timeout. A call sent with `NO_REPLY_EXPECTED` gets no reply at
/// all. Lives on the connection's loop thread.
public final class DBusMethodCall {
    /// The caller's unique name (`:1.42`).
    public let sender: BusName
    /// The object it was sent to.
    public let path: ObjectPath
    /// The interface it names (the one its method was found in when it named none).
    public let interface: InterfaceName?
    /// The method's name.
    public let member: MemberName
    /// Its arguments' signature.
    public let signature: String
    /// Its arguments.
    public let arguments: [DBusValue]

    private let message: DBusMessage
    private weak var connection: DBusConnection?
    private let generation: UInt64
    /// The reply's signature, checked before it is sent (`nil`: not checked).
    var resultSignature: String?
    /// Whether it has been answered.
    public private(set) var isAnswered = false

    init(
        message: DBusMessage, header: DBusCallHeader, arguments: [DBusValue], connection: DBusConnection,
        generation: UInt64
    ) {
        self.message = message
        self.sender = header.sender
        self.path = header.path
        self.interface = header.interface
        self.member = header.member
        self.signature = message.signature
        self.arguments = arguments
        self.connection = connection
        self.generation = generation
    }

    deinit {
        if !isAnswered {
            send(.error(DBusError(name: DBusError.Name.failed, message: "\(member) was not answered")))
        }
    }

    /// Answers with `values`, which must have the method's result types; values that do not
    /// are not sent, and the caller gets `org.freedesktop.DBus.Error.Failed` instead.
    /// A second answer is ignored.
    public func reply(_ values: [DBusValue] = []) {
        guard !isAnswered else { return }
        isAnswered = true
        let signature = values.map(\.signature).joined()
        if let resultSignature, signature != resultSignature {
            send(.error(DBusError(
                name: DBusError.Name.failed, message: "\(member) answered '\(signature)', expected '\(resultSignature)'")))
            return
        }
        send(.values(values))
    }

    /// Answers with `error` (its name must be a valid error name, else `Failed` is sent).
    /// A second answer is ignored.
    public func fail(_ error: DBusError) {
        guard !isAnswered else { return }
        isAnswered = true
        send(.error(error))
    }

    private enum Answer {
        case values([DBusValue])
        case error(DBusError)
    }

    /// Sends the answer on the link the call came in on (not a newer one, where the caller is gone).
    private func send(_ answer: Answer) {
        guard !message.expectsNoReply, let connection, connection.generation == generation,
              let link = connection.link
        else { return }
        let made: DBusMessage?
        switch answer {
        case .values(let values):
            made = (try? message.makeReturn(values))
                ?? message.makeError(DBusError(
                    name: DBusError.Name.failed, message: "\(member) answered values that cannot be sent"))
        case .error(let error):
            made = message.makeError(error)
        }
        if let made { try? link.send(made) }
    }
}

/// The header fields of a method call that dispatch needs. libdbus validated them when it read
/// the message.
struct DBusCallHeader {
    let sender: BusName
    let path: ObjectPath
    let interface: InterfaceName?
    let member: MemberName
}
