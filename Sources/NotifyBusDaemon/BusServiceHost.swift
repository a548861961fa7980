import DBus
import EpollLoop
import NotifyBusProtocol
import SourceFramework

/// The daemon's connection to its bus and the `BusService` on it, hosted on their loop and reached
/// from async code: each method runs its part on the loop thread.
final class BusServiceHost: Sendable {
    let loop: EventLoopThread
    private let key = LoopLocalKey<DBusConnection>()

    init(loop: EventLoopThread) {
        self.loop = loop
    }

    /// Connects to `address` (without reconnecting: the daemon ends with its bus; libdbus reads
    /// ahead at most `maximumReceived` bytes of messages), makes the service with `makeService`
    /// and exports its objects; returns once registered on the bus.
    /// - Throws: `NotifyBusDaemon.Failure.bus` when the bus cannot be reached.
    func connect(
        address: DBusAddress, maximumReceived: Int,
        makeService: @escaping @Sendable (LoopContext, DBusConnection) -> BusService
    ) async throws {
        let key = self.key
        let outcome: Result<Void, NotifyBusDaemon.Failure> = await withCheckedContinuation { continuation in
            do {
                try loop.execute { context in
                    let connection = DBusConnection(
                        address: address, context: context,
                        configuration: .init(
                            reconnects: false, maximumReceivedSize: maximumReceived,
                            maximumCallBodySize: BusInterface.Limits.callBodyBytes,
                            limitsExceeded: ErrorName(rawValue: BusInterface.ErrorName.limitsExceeded) ?? .limitsExceeded))
                    context[local: key] = connection
                    let service = makeService(context, connection)
                    context[local: BusService.key] = service
                    do {
                        try service.start()
                    } catch {
                        continuation.resume(returning: .failure(.bus("\(error)")))
                        return
                    }
                    var resumed = false
                    connection.onStateChange { state in
                        guard !resumed else { return }
                        switch state {
                        case .connected:
                            resumed = true
                            continuation.resume(returning: .success(()))
                        case .disconnected(let error):
                            resumed = true
                            continuation.resume(returning: .failure(.bus(error.description)))
                        case .closed:
                            resumed = true
                            continuation.resume(returning: .failure(.bus("closed")))
                        case .idle, .connecting:
                            break
                        }
                    }
                    connection.connect()
                }
            } catch {
                continuation.resume(returning: .failure(.eventLoop("\(error)")))
            }
        }
        try outcome.get()
    }

    /// Whether `name` has an owner on the bus (`NameHasOwner`).
    func nameHasOwner(_ name: BusName) async throws -> Bool {
        try await onConnection { connection, done in
            connection.call(
                destination: .bus, path: .bus, interface: .bus, member: "NameHasOwner", arguments: [.string(name.rawValue)]
            ) { result in done(result.map { $0.first?.boolValue ?? false }) }
        }
    }

    /// Owns `name` (without queueing).
    func requestName(_ name: BusName) async throws -> DBusConnection.NameRequestResult {
        try await onConnection { connection, done in connection.requestName(name, reply: done) }
    }

    /// Returns when the connection is lost or closed (throwing `Failure.bus`), or when the task is
    /// cancelled (returning).
    func waitUntilDisconnected() async throws {
        let key = self.key
        let loop = self.loop
        let stream = AsyncStream<DBusConnection.State> { continuation in
            do {
                try loop.execute { context in
                    guard let connection = context[local: key], connection.isConnected else {
                        continuation.yield(.closed)
                        return
                    }
                    let token = connection.onStateChange { continuation.yield($0) }
                    // A wait that ends (its task cancelled at shutdown) takes its handler back.
                    continuation.onTermination = { _ in
                        try? loop.execute { context in context[local: key]?.cancel(token) }
                    }
                }
            } catch {
                continuation.yield(.closed)
            }
        }
        for await state in stream {
            switch state {
            case .disconnected(let error): throw NotifyBusDaemon.Failure.bus(error.description)
            case .closed: throw NotifyBusDaemon.Failure.bus("the connection was closed")
            default: continue
            }
        }
    }

    /// Publishes a source's status in the `Sources` property.
    func setSource(_ name: String, _ status: SourceStatus) async {
        try? loop.execute { context in
            context[local: BusService.key]?.setSource(name, status: status.name, reason: status.reason ?? "")
        }
    }

    /// What the service keeps for its clients now.
    func census() async -> NotifyBusDaemon.Census? {
        try? await loop.submit { context in context[local: BusService.key]?.census } ?? nil
    }

    /// Cancels every subscription, takes the objects away and closes the connection.
    func close() async {
        let key = self.key
        _ = try? await loop.submit { context in
            context[local: BusService.key]?.stop()
            context[local: BusService.key] = nil
            context[local: key]?.close()
            context[local: key] = nil
        }
    }

    private func onConnection<R: Sendable>(
        _ body: @escaping @Sendable (DBusConnection, @escaping @Sendable (Result<R, DBusError>) -> Void) -> Void
    ) async throws -> R {
        let key = self.key
        let result: Result<R, DBusError> = await withCheckedContinuation { continuation in
            do {
                try loop.execute { context in
                    guard let connection = context[local: key] else {
                        continuation.resume(returning: .failure(.init(name: DBusError.Name.disconnected, message: "closed")))
                        return
                    }
                    body(connection) { continuation.resume(returning: $0) }
                }
            } catch {
                continuation.resume(returning: .failure(.init(name: DBusError.Name.failed, message: "\(error)")))
            }
        }
        do {
            return try result.get()
        } catch {
            throw NotifyBusDaemon.Failure.bus(error.description)
        }
    }
}
