import DBus
import EpollLoop
@testable import NotifyBusLifecycle
import TestSupport

/// A helper of the lifecycle that lives on its loop with a connection of its own, and stops there.
protocol LoopHelper: AnyObject, SendableMetatype {
    func stop()
}

extension MediaPlayers: LoopHelper {}
extension ProtectedProcesses: LoopHelper {}
extension SystemdUnits: LoopHelper {}

/// `Helper` on a loop of its own with its own connection to a private bus: made before the
/// connection connects, or, `onConnected`, on a connection registered on the bus already.
final class ConnectedOnLoop<Helper: LoopHelper>: Sendable {
    private let loop: EventLoopThread
    private let key = LoopLocalKey<(DBusConnection, Helper)>()

    init(
        name: String, bus: PrivateBus, configuration: DBusConnection.Configuration = .init(), onConnected: Bool = false,
        make: @escaping @Sendable (DBusConnection) -> Helper
    ) async throws {
        loop = try EventLoopThread(name: name)
        let (key, address) = (key, bus.dbusAddress)
        let connectionKey = LoopLocalKey<DBusConnection>()
        let install: @Sendable (LoopContext, DBusConnection) -> Void = { context, connection in
            context[local: key] = (connection, make(connection))
        }
        try await loop.submit { context in
            let connection = DBusConnection(address: address, context: context, configuration: configuration)
            if onConnected {
                context[local: connectionKey] = connection
            } else {
                install(context, connection)
            }
            connection.connect()
        }
        guard onConnected else { return }
        guard await eventually({ (try? await self.loop.submit { context in context[local: connectionKey]?.isConnected }) == true })
        else { throw HarnessError("the connection did not register on the bus") }
        try await loop.submit { context in
            guard let connection = context[local: connectionKey] else { return }
            install(context, connection)
            context[local: connectionKey] = nil
        }
    }

    /// What `body` reads of the helper, on its loop; `nil` once stopped.
    func read<R: Sendable>(_ body: @escaping @Sendable (Helper) -> R) async throws -> R? {
        let key = self.key
        return try await loop.submit { context in context[local: key].map { body($0.1) } }
    }

    /// Runs `body` with the helper on its loop and awaits what it hands `done`.
    func await<R: Sendable>(_ body: @escaping @Sendable (Helper, @escaping @Sendable (R) -> Void) -> Void) async throws -> R {
        let key = self.key
        return try await withCheckedThrowingContinuation { continuation in
            do {
                try loop.execute { context in
                    guard let (_, helper) = context[local: key] else {
                        continuation.resume(throwing: HarnessError("stopped"))
                        return
                    }
                    body(helper) { continuation.resume(returning: $0) }
                }
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    /// Stops the helper, closes its connection and ends the loop.
    func stop() async {
        let key = self.key
        _ = try? await loop.submit { context in
            if let (connection, helper) = context[local: key] {
                helper.stop()
                connection.close()
            }
            context[local: key] = nil
        }
        await loop.shutdown()
    }
}
