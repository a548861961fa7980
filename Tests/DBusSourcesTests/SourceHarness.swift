import DBus
import TestSupport
import NotifyBus
import NotifyBusSources
import Testing

/// A source running in a task, a subscriber recording what it receives, the statuses, and
/// what the source logged (when it was made with `problems.logger`).
final class RunningSource<Source: NotifyBusSource>: Sendable {
    let source: Source
    let bus: NotificationBus
    let events = Recorder<SubscriptionEvent>()
    let statuses = Recorder<SourceStatus>()
    let problems: LogRecorder
    let subscription: Subscription
    private let task: Task<Void, any Error>
    private let statusTask: Task<Void, Never>

    init(_ source: Source, bus: NotificationBus, log: LogRecorder = LogRecorder(), patterns: [KeyPattern] = [.all]) {
        self.source = source
        self.bus = bus
        problems = log
        log.snapshotStore(of: bus)
        let events = self.events
        let statuses = self.statuses
        subscription = bus.subscribe(patterns) { events.append($0) }
        let updates = source.statusUpdates()
        statusTask = Task { for await status in updates { statuses.append(status) } }
        task = Task { try await source.run() }
    }

    /// Cancels `run()` and waits for it to return.
    func stop() async throws {
        task.cancel()
        try await task.value
        statusTask.cancel()
    }

    var notifications: [BusNotification] { events.all.compactMap(\.notification) }

    /// The values received for `key`, in order.
    func values(_ key: String) -> [JSONValue] { notifications.filter { $0.key == key }.map(\.value) }

    /// Waits until the latest value of `key` is `value`.
    @discardableResult
    func waitFor(_ key: String, _ value: JSONValue, timeout: Duration = .seconds(30)) async -> Bool {
        await events.wait(timeout: timeout) { events in
            events.compactMap(\.notification).last(where: { $0.key == key })?.value == value
        }
    }

    /// The bus's store at the moment the source first reported `running` (taken on its loop
    /// thread as it logged the change, just after the report): what a subscriber starting then
    /// gets as initial values. `nil` when it did not say `running` within `timeout`.
    func storeWhenFirstRunning(timeout: Duration = .seconds(10)) async -> [String: JSONValue]? {
        await eventually(timeout: timeout) { problems.storeWhenFirst("running") != nil }
        return problems.storeWhenFirst("running")
    }

    /// Waits until the source reports a status named `name` (after `after` earlier reports).
    @discardableResult
    func waitForStatus(_ name: String, timeout: Duration = .seconds(30)) async -> Bool {
        await eventually(timeout: timeout) { source.status.name == name }
    }
}

/// Calls a method of the mock's `org.freedesktop.DBus.Mock` interface.
@discardableResult
func mockCall(
    _ client: DBusClient, _ service: String, _ path: String, _ member: String, _ arguments: [DBusValue]
) async throws -> [DBusValue] {
    try await client.call(
        destination: BusName(validating: service), path: ObjectPath(validating: path), interface: "org.freedesktop.DBus.Mock",
        member: MemberName(validating: member), arguments: arguments)
}

/// `PropertiesChanged(interface, changed, [])` as the `av` that dbusmock's `EmitSignal` takes.
func propertiesChangedArguments(_ interface: String, _ changed: [(String, DBusValue)]) -> DBusValue {
    .array(elementSignature: "v", [.variant(.string(interface)), .variant(.vardict(changed)), .variant(.strings([]))])
}
