/// A method call to an exported object, answered once with `reply(_:)` or `fail(_:)`.
///
/// A call dropped without an answer is answered with `org.freedesktop.DBus.Error.Failed`, so a
/// caller never waits for its timeout. A call sent with `NO_REPLY_EXPECTED` runs its handler
/// like any other and gets no reply at all. Lives on the connection's loop thread.
public final class DBusMethodCall {
    /// Its header: sender, path, interface, member, signature.
    public let header: DBusCallHeader
    /// The interface of its method: the one it names, or the one its method was found in when
    /// it named none.
    public let interface: InterfaceName?
    /// Its arguments, decoded within the method's budget; their signature is the method's.
    public let arguments: [DBusValue]
    /// The reply's signature, checked before it is sent (`nil`: not checked).
    public let resultSignature: String?

    private let respond: (Result<[DBusValue], DBusError>) -> Void
    /// Whether it has been answered.
    public private(set) var isAnswered = false

    /// A call with `header` and decoded `arguments`, for the method of `interface`, whose answer
    /// goes to `respond` (once; values of another signature than `resultSignature` become
    /// `Failed`). The connection makes these; a test or fuzzer drives handlers with its own.
    public init(
        header: DBusCallHeader, interface: InterfaceName?, arguments: [DBusValue], resultSignature: String?,
        respond: @escaping (Result<[DBusValue], DBusError>) -> Void
    ) {
        self.header = header
        self.interface = interface
        self.arguments = arguments
        self.resultSignature = resultSignature
        self.respond = respond
    }

    deinit {
        if !isAnswered {
            respond(.failure(DBusError(name: DBusError.Name.failed, message: "\(member) was not answered")))
        }
    }

    /// The caller's unique name (`:1.42`).
    public var sender: BusName { header.sender }
    /// The object it was sent to.
    public var path: ObjectPath { header.path }
    /// The method's name.
    public var member: MemberName { header.member }
    /// Its arguments' signature.
    public var signature: String { header.signature }

    /// Answers with `values`, which must have the method's result types; values that do not
    /// are not sent, and the caller gets `org.freedesktop.DBus.Error.Failed` instead.
    /// A second answer is ignored.
    public func reply(_ values: [DBusValue] = []) {
        guard !isAnswered else { return }
        isAnswered = true
        let signature = values.map(\.signature).joined()
        if let resultSignature, signature != resultSignature {
            respond(.failure(DBusError(
                name: DBusError.Name.failed, message: "\(member) answered '\(signature)', expected '\(resultSignature)'")))
            return
        }
        respond(.success(values))
    }

    /// Answers with `error` (its name must be a valid error name, else `Failed` is sent).
    /// A second answer is ignored.
    public func fail(_ error: DBusError) {
        guard !isAnswered else { return }
        isAnswered = true
        respond(.failure(error))
    }
}
