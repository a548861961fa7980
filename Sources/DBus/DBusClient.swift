public import EpollLoop

/// An async/await handle on a `DBusConnection`, usable from any thread or task.
///
/// The connection itself lives on an `EventLoopThread` (the one given, or one the client
/// starts and stops); every method here sends a job there and awaits the result.
///
/// ```swift
/// let client = try DBusClient(address: .system)
/// try await client.waitUntilConnected()
/// let orientation = try await client.property(
///     destination: "net.hadess.SensorProxy", path: "/net/hadess/SensorProxy",
///     interface: "net.hadess.SensorProxy", name: "AccelerometerOrientation")
/// for await signal in await client.signals(matching: DBusMatchRule(member: "SettingChanged")) { … }
/// await client.close()
/// ```
public final class DBusClient: Sendable {
    /// The bus it connects to.
    public let address: DBusAddress
    private let loop: EventLoopThread
    private let ownsLoop: Bool
    private let key = LoopLocalKey<DBusConnection>()

    /// Creates the connection on `loop` (or on a loop of its own) and starts connecting.
    /// - Throws: `DBusError` (`Failed`) when the loop cannot start or is shut down.
    public init(
        address: DBusAddress, loop: EventLoopThread? = nil,
        configuration: DBusConnection.Configuration = DBusConnection.Configuration()
    ) throws(DBusError) {
        self.address = address
        do {
            self.loop = try loop ?? EventLoopThread(name: "dbus-client")
        } catch {
            throw DBusError(name: DBusError.Name.failed, message: "event loop: \(error)")
        }
        ownsLoop = loop == nil
        let key = self.key
        do {
            try self.loop.execute { context in
                let connection = DBusConnection(address: address, context: context, configuration: configuration)
                context[local: key] = connection
                connection.connect()
            }
        } catch {
            throw DBusError(name: DBusError.Name.failed, message: "event loop: \(error)")
        }
    }

    deinit {
        let key = self.key
        try? loop.execute { context in
            context[local: key]?.close()
            context[local: key] = nil
        }
        if ownsLoop { loop.syncShutdown() }
    }

    /// Closes the connection (outstanding calls fail with `Disconnected`); stops its own loop.
    public func close() async {
        let key = self.key
        _ = try? await loop.submit { context in
            context[local: key]?.close()
            context[local: key] = nil
        }
        if ownsLoop { await loop.shutdown() }
    }

    /// Runs `body` with the connection on the loop; `nil` when closed.
    private func withConnection<R: Sendable>(_ body: @escaping @Sendable (DBusConnection) -> R) async -> R? {
        let key = self.key
        return try? await loop.submit { context in context[local: key].map(body) }
    }

    /// Runs `body` with the connection on the loop and awaits what it hands `done`.
    private func perform<R: Sendable>(
        _ body: @escaping @Sendable (DBusConnection, @escaping @Sendable (Result<R, DBusError>) -> Void) -> Void
    ) async throws(DBusError) -> R {
        let key = self.key
        let result: Result<R, DBusError> = await withCheckedContinuation { continuation in
            do {
                try loop.execute { context in
                    guard let connection = context[local: key] else {
                        continuation.resume(returning: .failure(.disconnected("the client is closed")))
                        return
                    }
                    body(connection) { continuation.resume(returning: $0) }
                }
            } catch {
                continuation.resume(returning: .failure(.disconnected("the event loop is shut down")))
            }
        }
        return try result.get()
    }

    /// The connection's state now.
    public var state: DBusConnection.State {
        get async { await withConnection { $0.state } ?? .closed }
    }

    /// Waits until the connection is registered on the bus; returns our unique name.
    /// - Throws: `DBusError` (`NoReply`) after `timeout`; the last connection error if there was one.
    @discardableResult
    public func waitUntilConnected(timeout: Duration = .seconds(10)) async throws(DBusError) -> BusName {
        try await perform { connection, done in
            if let name = connection.uniqueName {
                done(.success(name))
                return
            }
            let context = connection.context
            let finished = Box(false)
            var token: DBusConnection.Token?
            var lastError: DBusError?
            let timer = context.scheduleTimer(after: timeout) { [weak connection] in
                guard !finished.value else { return }
                finished.value = true
                if let token { connection?.cancel(token) }
                done(.failure(lastError ?? DBusError(name: DBusError.Name.noReply, message: "not connected after \(timeout)")))
            }
            token = connection.onStateChange { [weak connection, unowned context] state in
                switch state {
                case .connected(let name):
                    guard !finished.value else { return }
                    finished.value = true
                    context.cancelTimer(timer)
                    if let token { connection?.cancel(token) }
                    done(.success(name))
                case .disconnected(let error):
                    lastError = error
                case .closed:
                    guard !finished.value else { return }
                    finished.value = true
                    context.cancelTimer(timer)
                    done(.failure(.disconnected("the client is closed")))
                default:
                    break
                }
            }
        }
    }

    /// Every later change of the connection's state, until the client is closed or the stream dropped.
    public func stateUpdates() async -> AsyncStream<DBusConnection.State> {
        let (stream, continuation) = AsyncStream.makeStream(of: DBusConnection.State.self)
        let loop = self.loop
        let key = self.key
        let registered = await withConnection { connection in
            let token = connection.onStateChange { state in
                continuation.yield(state)
                if state == .closed { continuation.finish() }
            }
            continuation.onTermination = { _ in try? loop.execute { $0[local: key]?.cancel(token) } }
            return true
        }
        if registered == nil { continuation.finish() }
        return stream
    }

    /// Calls a method and returns its results. See `DBusConnection.call`.
    /// - Throws: `DBusError`: the peer's error, `NoReply` on timeout, `Disconnected`, `InvalidArgs`.
    public func call(
        destination: BusName?, path: ObjectPath, interface: InterfaceName?, member: MemberName,
        arguments: [DBusValue] = [], timeout: Duration? = nil
    ) async throws(DBusError) -> [DBusValue] {
        try await perform { connection, done in
            connection.call(
                destination: destination, path: path, interface: interface, member: member, arguments: arguments,
                timeout: timeout, reply: done)
        }
    }

    /// Reads a property (`Properties.Get`), its variant unwrapped once.
    public func property(
        destination: BusName, path: ObjectPath, interface: InterfaceName, name: String, timeout: Duration? = nil
    ) async throws(DBusError) -> DBusValue {
        try await perform { connection, done in
            connection.getProperty(
                destination: destination, path: path, interface: interface, name: name, timeout: timeout, reply: done)
        }
    }

    /// Reads every property of an interface (`Properties.GetAll`), variants unwrapped once.
    public func allProperties(
        destination: BusName, path: ObjectPath, interface: InterfaceName, timeout: Duration? = nil
    ) async throws(DBusError) -> [String: DBusValue] {
        try await perform { connection, done in
            connection.getAllProperties(
                destination: destination, path: path, interface: interface, timeout: timeout, reply: done)
        }
    }

    /// Writes a property (`Properties.Set`).
    public func setProperty(
        destination: BusName, path: ObjectPath, interface: InterfaceName, name: String, value: DBusValue,
        timeout: Duration? = nil
    ) async throws(DBusError) {
        try await perform { connection, done in
            connection.setProperty(
                destination: destination, path: path, interface: interface, name: name, value: value,
                timeout: timeout, reply: done)
        }
    }

    /// Calls a method without waiting for its reply: the call is queued at once, so calls sent
    /// this way from one thread leave in the order they were made. `completion`, if given, gets
    /// the results (or the error) on the loop thread.
    public func send(
        destination: BusName?, path: ObjectPath, interface: InterfaceName?, member: MemberName,
        arguments: [DBusValue] = [], completion: (@Sendable (Result<[DBusValue], DBusError>) -> Void)? = nil
    ) {
        let key = self.key
        do {
            try loop.execute { context in
                guard let connection = context[local: key] else {
                    completion?(.failure(.disconnected("the client is closed")))
                    return
                }
                connection.call(
                    destination: destination, path: path, interface: interface, member: member, arguments: arguments
                ) { completion?($0) }
            }
        } catch {
            completion?(.failure(.disconnected("the client is closed")))
        }
    }

    /// Emits a signal, broadcast or unicast to `destination`.
    public func emitSignal(
        path: ObjectPath, interface: InterfaceName, member: MemberName, arguments: [DBusValue] = [],
        destination: BusName? = nil
    ) async throws(DBusError) {
        try await perform { connection, done in
            done(Result { () throws(DBusError) in
                try connection.emitSignal(
                    path: path, interface: interface, member: member, arguments: arguments, destination: destination)
            })
        }
    }

    /// The signals matching `rule`, broadcast or unicast to us, from the moment this returns
    /// (the match rule is queued before any later call of this client) until the stream is
    /// dropped or the client closed. The stream form of `DBusConnection.signals(matching:handler:)`.
    public func signals(matching rule: DBusMatchRule) async -> AsyncStream<DBusSignal> {
        await stream { connection, continuation in connection.signals(matching: rule) { continuation.yield($0) } }
    }

    /// The owner of the well-known `name` once known, then every change (`nil`: no owner).
    /// The stream form of `DBusConnection.nameOwners(of:handler:)`.
    public func nameOwners(of name: BusName, followsDepartures: Bool = true) async -> AsyncStream<BusName?> {
        await stream { connection, continuation in
            connection.nameOwners(of: name, followsDepartures: followsDepartures) { continuation.yield($0) }
        }
    }

    /// The match rules the bus refuses from now on, with its error. The stream form of
    /// `DBusConnection.onMatchRuleFailure(_:)`.
    public func matchRuleFailures() async -> AsyncStream<(rule: DBusMatchRule, error: DBusError)> {
        await stream { connection, continuation in
            connection.onMatchRuleFailure { continuation.yield((rule: $0, error: $1)) }
        }
    }

    /// The unique name of every connection that leaves the bus from now on, through one match
    /// rule. The stream form of `DBusConnection.peersLeaving(_:)`.
    public func peersLeaving() async -> AsyncStream<BusName> {
        await stream { connection, continuation in connection.peersLeaving { continuation.yield($0) } }
    }

    /// What the bus knows of the process behind the connection `name`
    /// (`GetConnectionCredentials`). See `DBusConnection.credentials(of:reply:)`.
    public func credentials(of name: BusName) async throws(DBusError) -> DBusCredentials {
        try await perform { connection, done in connection.credentials(of: name, reply: done) }
    }

    /// A stream fed by what `register` sets up on the connection, on the loop; it ends when the
    /// client closes, and dropping it cancels the registration.
    private func stream<Element: Sendable>(
        _ register: @escaping @Sendable (DBusConnection, AsyncStream<Element>.Continuation) -> DBusConnection.Token
    ) async -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self)
        let loop = self.loop
        let key = self.key
        let registered = await withConnection { connection in
            let token = register(connection, continuation)
            let stateToken = connection.onStateChange { if $0 == .closed { continuation.finish() } }
            continuation.onTermination = { _ in
                try? loop.execute { context in
                    context[local: key]?.cancel(token)
                    context[local: key]?.cancel(stateToken)
                }
            }
            return true
        }
        if registered == nil { continuation.finish() }
        return stream
    }
}

/// A mutable value shared by closures on the loop thread.
final class Box<Value> {
    var value: Value
    init(_ value: Value) { self.value = value }
}
