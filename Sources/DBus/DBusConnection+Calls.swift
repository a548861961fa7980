import EpollLoop

extension DBusConnection {
    /// A call waiting for its reply.
    struct OutstandingCall {
        let pending: DBusPendingCall
        let completion: (Result<DBusMessage, DBusError>) -> Void
    }

    /// Sends `message` and calls `completion` with the reply (on the loop thread).
    func send(
        _ message: DBusMessage, timeout: Duration?, completion: @escaping (Result<DBusMessage, DBusError>) -> Void
    ) {
        guard let link, !link.isShutDown else {
            context.runSoon { completion(.failure(.disconnected())) }
            return
        }
        let pending: DBusPendingCall
        do {
            pending = try link.sendWithReply(message, timeout: timeout ?? configuration.defaultTimeout)
        } catch {
            context.runSoon { completion(.failure(error)) }
            return
        }
        let id = makeID()
        calls[id] = OutstandingCall(pending: pending, completion: completion)
        do {
            try pending.whenCompleted { [weak self] reply in self?.completeCall(id, reply: reply) }
        } catch {
            calls[id] = nil
            pending.cancel()
            context.runSoon { completion(.failure(error)) }
        }
    }

    private func completeCall(_ id: UInt64, reply: DBusMessage?) {
        guard let call = calls.removeValue(forKey: id) else { return }
        guard let reply else {
            call.completion(.failure(DBusError(name: DBusError.Name.noReply, message: "no reply")))
            return
        }
        if reply.kind == .error {
            call.completion(.failure(reply.error()))
        } else {
            call.completion(.success(reply))
        }
    }

    /// Calls a method and hands `completion` the reply message itself.
    func callForReply(
        destination: BusName?, path: ObjectPath, interface: InterfaceName?, member: MemberName,
        arguments: [DBusValue], timeout: Duration?, completion: @escaping (Result<DBusMessage, DBusError>) -> Void
    ) {
        let message: DBusMessage
        do {
            message = try DBusMessage.methodCall(destination: destination, path: path, interface: interface, member: member)
            try message.append(arguments)
        } catch {
            context.runSoon { completion(.failure(error)) }
            return
        }
        send(message, timeout: timeout, completion: completion)
    }

    /// Calls `interface.member` on `path` of `destination` and calls `reply` on the loop thread
    /// with its return values, or the error: the peer's (name and message as sent),
    /// `NoReply` after `timeout` (the configuration's default when `nil`), `Disconnected` when
    /// the bus is not connected or goes away, `InvalidArgs` for values that cannot be sent.
    /// The message is sent by `DBusLink` (`dbus_connection_send_with_reply`) and its reply
    /// awaited by `DBusPendingCall` (`dbus_pending_call_set_notify`).
    public func call(
        destination: BusName?, path: ObjectPath, interface: InterfaceName?, member: MemberName,
        arguments: [DBusValue] = [], timeout: Duration? = nil,
        reply: @escaping (Result<[DBusValue], DBusError>) -> Void
    ) {
        callForReply(
            destination: destination, path: path, interface: interface, member: member, arguments: arguments,
            timeout: timeout
        ) { result in
            reply(result.flatMap { message in Result { () throws(DBusError) in try message.arguments() } })
        }
    }

    /// Emits a signal: broadcast, or unicast to `destination`. Sent by `DBusLink`
    /// (`dbus_connection_send`).
    /// - Throws: `DBusError` (`InvalidArgs`) for values that cannot be sent, `Disconnected` when not connected.
    public func emitSignal(
        path: ObjectPath, interface: InterfaceName, member: MemberName, arguments: [DBusValue] = [],
        destination: BusName? = nil
    ) throws(DBusError) {
        try emitSignal(path: path, interface: interface, member: member, destination: destination) {
            (message) throws(DBusError) in try message.append(arguments)
        }
    }

    /// Emits a signal whose arguments `append` writes into it: broadcast, or unicast to
    /// `destination`.
    func emitSignal(
        path: ObjectPath, interface: InterfaceName, member: MemberName, destination: BusName?,
        appending append: (DBusMessage) throws(DBusError) -> Void
    ) throws(DBusError) {
        let message = try DBusMessage.signal(path: path, interface: interface, member: member, destination: destination)
        try append(message)
        guard let link, isConnected else { throw .disconnected() }
        try link.send(message)
    }

    /// Emits `signal` from `path`: broadcast, or unicast to `destination`. Its arguments were
    /// checked and marshalled once, when it was prepared. The first emission from the path and
    /// to the destination it was prepared with sends the prepared message itself; any other
    /// copies it (`dbus_message_copy`) and sets the path and destination, instead of marshalling
    /// the arguments again through libdbus's iterators.
    /// - Throws: `DBusError` (`NoMemory`), `Disconnected` when not connected.
    public func emitSignal(_ signal: DBusPreparedSignal, path: ObjectPath, destination: BusName? = nil) throws(DBusError) {
        guard let link, isConnected else { throw .disconnected() }
        try link.send(try signal.message(path: path, destination: destination))
    }
}

/// A signal's interface, member and arguments, marshalled once, to be emitted from any path to
/// any destination (`DBusConnection.emitSignal(_:path:destination:)`): one change sent to many
/// subscribers. Used on its connection's loop.
public final class DBusPreparedSignal {
    private let prepared: DBusMessage
    private let path: ObjectPath
    private let destination: BusName?
    private var preparedIsSent = false

    /// Checks and marshals `arguments` for `interface.member`, from `path` to `destination`
    /// (none: a broadcast), where it is likely to go first.
    /// - Throws: `DBusError` (`InvalidArgs`) for values that cannot be sent.
    public init(
        path: ObjectPath, interface: InterfaceName, member: MemberName, arguments: [DBusValue], destination: BusName? = nil
    ) throws(DBusError) {
        prepared = try DBusMessage.signal(path: path, interface: interface, member: member, destination: destination)
        try prepared.append(arguments)
        self.path = path
        self.destination = destination
    }

    /// The message to send from `path` to `destination`: the prepared one the first time it is
    /// asked for with its own path and destination, otherwise a copy with theirs (a sent message
    /// is never sent again).
    func message(path: ObjectPath, destination: BusName?) throws(DBusError) -> DBusMessage {
        if !preparedIsSent, path == self.path, destination == self.destination {
            preparedIsSent = true
            return prepared
        }
        return try prepared.copy(path: path, destination: destination)
    }
}
