/// Handlers registered on one connection (signal subscriptions, name watches, state handlers),
/// cancelled together: by `cancelAll()`, or when the set goes away.
///
/// Not `Sendable`: made, used and released on the connection's loop thread.
public final class DBusHandlerSet {
    /// The connection the handlers are registered on.
    public let connection: DBusConnection
    private var tokens: [DBusConnection.Token] = []

    /// An empty set on `connection`.
    public init(connection: DBusConnection) {
        self.connection = connection
    }

    deinit {
        cancelAll()
    }

    /// Keeps `token` (what `signals(matching:)`, `nameOwners(of:)`, `onStateChange` and the like
    /// return) to cancel it with the others.
    public func add(_ token: DBusConnection.Token) {
        tokens.append(token)
    }

    /// Cancels every handler kept (`DBusConnection.cancel(_:)`); none is called again.
    public func cancelAll() {
        for token in tokens { connection.cancel(token) }
        tokens = []
    }
}
