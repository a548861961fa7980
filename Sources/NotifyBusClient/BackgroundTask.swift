public import DBus
import NotifyBusProtocol
import Synchronization

/// Time the daemon grants this app in the background (specification: Freezing background apps,
/// "Background time"), as iOS's `beginBackgroundTask`: while it is open, `notifybusd
/// --freeze-background` does not freeze the app's cgroup, for at most `granted`, counted from the
/// later of its beginning and the moment the app left the foreground.
///
/// ```swift
/// let task = try await client.beginBackgroundTask(reason: "sending the outbox")
/// async let warned: Void = { for await left in task.expirations { outbox.hurry(within: left) } }()
/// try await outbox.send()
/// try await task.end()
/// ```
///
/// `expirations` yields the time left when the daemon says the grant runs out soon
/// (`BackgroundTaskExpiring`: 5 s before, or at once if less is left); then the task ends by
/// itself. Ending it (`end()`, or letting the last reference go) lets the app be frozen at once
/// if it is past its delay in the background.
public final class BackgroundTask: Sendable {
    /// Its number on the daemon.
    public let number: UInt32
    /// The time granted.
    public let granted: Duration
    private let connection: DBusClient
    private let warnings: AsyncStream<DBusSignal>
    private let ended = Atomic(false)

    init(number: UInt32, granted: Duration, connection: DBusClient, warnings: AsyncStream<DBusSignal>) {
        self.number = number
        self.granted = granted
        self.connection = connection
        self.warnings = warnings
    }

    deinit {
        guard !ended.load(ordering: .relaxed) else { return }
        connection.send(
            destination: BusInterface.busName, path: BusInterface.path, interface: LifecycleInterface.interface,
            member: LifecycleInterface.endBackgroundTask, arguments: [.uint32(number)])
    }

    /// The time left each time the daemon says the grant runs out soon.
    public var expirations: some AsyncSequence<Duration, Never> & Sendable {
        let number = self.number
        return warnings.compactMap { @Sendable signal -> Duration? in
            guard signal.arguments.count == 2, case .uint32(number) = signal.arguments[0],
                case .uint32(let seconds) = signal.arguments[1]
            else { return nil }
            return .seconds(seconds)
        }
    }

    /// Ends the task (`EndBackgroundTask`).
    /// - Throws: `DBusError`: `InvalidArgs` when it is no longer open (it ran out, or was ended).
    public func end() async throws(DBusError) {
        guard !ended.exchange(true, ordering: .relaxed) else { return }
        _ = try await connection.call(
            destination: BusInterface.busName, path: BusInterface.path, interface: LifecycleInterface.interface,
            member: LifecycleInterface.endBackgroundTask, arguments: [.uint32(number)])
    }
}

extension NotifyBusClient {
    /// Begins a background task (`BeginBackgroundTask`): the daemon keeps this app running in the
    /// background for the time it grants; `reason` (at most 256 bytes) goes to its log.
    /// - Throws: `DBusError`: `org.notifybus.Error.NotAnApp` when this process is in no app unit,
    ///   `org.notifybus.Error.LimitsExceeded` past 16 open tasks of the app, `InvalidArgs` for a
    ///   longer reason, `UnknownInterface`/`UnknownMethod` when the daemon does not freeze apps.
    public func beginBackgroundTask(reason: String) async throws(DBusError) -> BackgroundTask {
        // Listened for before the call: a grant shorter than the warning is warned of at once.
        let warnings = await connection.signals(matching: DBusMatchRule(
            sender: BusInterface.busName, interface: LifecycleInterface.interface, member: LifecycleInterface.backgroundTaskExpiring))
        let reply = try await connection.call(
            destination: BusInterface.busName, path: BusInterface.path, interface: LifecycleInterface.interface,
            member: LifecycleInterface.beginBackgroundTask, arguments: [.string(reason)])
        guard reply.count == 2, case .uint32(let number) = reply[0], case .uint32(let seconds) = reply[1] else {
            throw DBusError(name: DBusError.Name.invalidArgs, message: "BeginBackgroundTask answered \(reply)")
        }
        return BackgroundTask(number: number, granted: .seconds(seconds), connection: connection, warnings: warnings)
    }
}
