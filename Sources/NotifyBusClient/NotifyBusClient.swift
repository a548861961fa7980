public import DBus
public import NotifyBus
import NotifyBusProtocol
import Synchronization
package import SystemSupport

/// An app's way to the bus that `notifybusd` runs (specification: D-Bus interface): subscriptions that yield the
/// same `SubscriptionEvent`s as an in-process `NotificationBus`, held for the app by the daemon
/// while the app is suspended, frozen or stopped.
///
/// Switching from an in-process bus is one line:
/// ```swift
/// // let subscription = bus.subscribe(["battery/**"], policy: .latest)
/// let subscription = try await NotifyBusClient().subscribe(["battery/**"], policy: .latest)
/// for await event in subscription {
///     if case .notification(let n) = event { print(n.key, n.value, n.coalesced) }
/// }
/// ```
///
/// Every `Events` signal of the daemon reaches the client through one match rule (on the daemon's
/// well-known name, followed across restarts), and is routed to its subscription by object path;
/// events that arrive before `subscribe` has returned wait for it. Each subscription's elements
/// are numbered (`seq`): when one is missing (the bus dropped a signal this process did not read
/// in time), the client calls `Resync`, and the daemon sends every current value again, so a
/// value is never lost, only counts. When the daemon leaves the bus, every subscription's
/// sequence ends (its subscriptions are gone with it).
public final class NotifyBusClient: Sendable {
    /// The D-Bus connection it uses.
    public let connection: DBusClient
    /// The wall-clock time it was made: event times count from here, as an in-process bus's
    /// times count from the bus's start.
    package let origin: WallTime
    let router = Router()

    /// Connects to the session bus (or `address`) and starts listening for the daemon's events.
    /// - Throws: `DBusError` when the connection cannot be made.
    public init(address: DBusAddress = .session) async throws(DBusError) {
        origin = WallTime.now()
        connection = try DBusClient(address: address, configuration: .init(reconnects: false))
        _ = try await connection.waitUntilConnected()
        let events = await connection.signals(matching: DBusMatchRule(
            sender: BusInterface.busName, interface: BusInterface.subscriptionInterface, member: BusInterface.eventsSignal))
        let owners = await connection.nameOwners(of: BusInterface.busName)
        let router = self.router
        let origin = self.origin
        let connection = self.connection
        Task {
            for await signal in events {
                guard signal.arguments.count == 1 else { continue }
                let decoded = EventElements.decode(signal.arguments[0], origin: origin)
                if router.deliver(decoded, to: signal.path) {
                    connection.send(
                        destination: BusInterface.busName, path: signal.path, interface: BusInterface.subscriptionInterface,
                        member: "Resync")
                }
            }
            router.finishAll()
        }
        Task {
            var seen: BusName?? = .none
            for await owner in owners {
                // The daemon left or was replaced: its subscriptions are gone.
                if case .some(let previous?) = seen, previous != owner { router.finishAll() }
                seen = .some(owner)
            }
        }
    }

    /// The time since `origin`, on the scale of the events' times.
    public func elapsed() -> Duration { WallTime.now().since(origin) }

    /// Whether a daemon owns `org.notifybus.Bus1` on the bus now.
    public func isDaemonRunning() async -> Bool {
        let reply = try? await connection.call(
            destination: .bus, path: .bus, interface: .bus, member: "NameHasOwner",
            arguments: [.string(BusInterface.busName.rawValue)])
        return reply?.first?.boolValue ?? false
    }

    /// Whether a daemon serves `org.notifybus.Bus1` on the bus, once the bus has been asked to
    /// start one (`StartServiceByName`) when none owns the name: it does where a D-Bus service
    /// file names it (`share/dbus-1/services/org.notifybus.Bus1.service`, which `scripts/install`
    /// installs), and answers once the daemon owns the name.
    public func startDaemon() async -> Bool {
        if await isDaemonRunning() { return true }
        let reply = try? await connection.call(
            destination: .bus, path: .bus, interface: .bus, member: "StartServiceByName",
            arguments: [.string(BusInterface.busName.rawValue), .uint32(0)])
        return reply != nil
    }

    /// Subscribes through the daemon to the keys matching `patterns`; iterate the result.
    ///
    /// - Parameters:
    ///   - patterns: which keys; the default matches all.
    ///   - policy: what a resume delivers.
    ///   - limit: the most entries held while suspended (1 to 65,536).
    ///   - initial: `.current` delivers the current value of every matching key first.
    ///   - followsFreezer: whether the daemon holds notifications while this process is frozen or
    ///     stopped (specification: D-Bus interface, "Following the subscriber's life").
    /// - Throws: `DBusError`: `ServiceUnknown` without a daemon, `InvalidArgs`,
    ///   `org.notifybus.Error.LimitsExceeded`.
    public func subscribe(
        _ patterns: [KeyPattern] = [.all], policy: DeliveryPolicy = .latest, limit: Int = NotificationBus.defaultLimit,
        initial: InitialDelivery = .none, followsFreezer: Bool = true
    ) async throws(DBusError) -> RemoteSubscription {
        let request = SubscribeRequest(
            patterns: patterns, policy: policy, limit: limit, initial: initial, followsFreezer: followsFreezer)
        let reply = try await connection.call(
            destination: BusInterface.busName, path: BusInterface.path, interface: BusInterface.interface,
            member: "Subscribe", arguments: request.arguments)
        guard case .objectPath(let text) = reply.first, let path = ObjectPath(rawValue: text) else {
            throw DBusError(name: DBusError.Name.invalidArgs, message: "Subscribe answered \(reply)")
        }
        let (stream, continuation) = AsyncStream.makeStream(of: SubscriptionEvent.self)
        let subscription = RemoteSubscription(client: self, path: path, events: stream)
        router.register(path, continuation)
        continuation.onTermination = { [router] _ in router.unregister(path) }
        return subscription
    }

    /// The latest value of `key`, or `nil` when the bus has none.
    public func value(forKey key: String) async throws(DBusError) -> JSONValue? {
        do {
            let reply = try await connection.call(
                destination: BusInterface.busName, path: BusInterface.path, interface: BusInterface.interface,
                member: "GetValue", arguments: [.string(key)])
            return reply.first?.stringValue.flatMap { try? JSONValue(parsing: $0) }
        } catch where error.name == BusInterface.ErrorName.unknownKey {
            return nil
        }
    }

    /// The current value of every key matching `patterns`, in order of each key's latest event.
    public func snapshot(matching patterns: [KeyPattern] = [.all]) async throws(DBusError) -> [(key: String, value: JSONValue)] {
        let reply = try await connection.call(
            destination: BusInterface.busName, path: BusInterface.path, interface: BusInterface.interface,
            member: "Snapshot", arguments: [.strings(patterns.map(\.text))])
        return (reply.first?.arrayElements ?? []).compactMap { element in
            guard case .structure(let fields) = element, fields.count == 2, let key = fields[0].stringValue,
                  let text = fields[1].stringValue, let value = try? JSONValue(parsing: text)
            else { return nil }
            return (key, value)
        }
    }

    /// The daemon's sources and their statuses (its `Sources` property).
    public func sources() async throws(DBusError) -> [SourceState] {
        let value = try await connection.property(
            destination: BusInterface.busName, path: BusInterface.path, interface: BusInterface.interface, name: "Sources")
        return SourceState.decode(value)
    }

    /// The daemon's sources whenever their statuses change (`PropertiesChanged` of `Sources`).
    public func sourceUpdates() async -> AsyncStream<[SourceState]> {
        let changes = await connection.signals(matching: .propertiesChanged(
            sender: BusInterface.busName, path: BusInterface.path, interface: BusInterface.interface))
        return AsyncStream { continuation in
            let task = Task {
                for await signal in changes {
                    guard let change = try? DBusPropertiesChange(signal), let sources = change.changed["Sources"] else { continue }
                    continuation.yield(SourceState.decode(sources))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Closes the connection; every subscription's sequence ends (the daemon cancels them).
    public func close() async {
        router.finishAll()
        await connection.close()
    }

    /// Sends a subscription's method call, in order with the others.
    func send(_ member: MemberName, to path: ObjectPath) {
        connection.send(
            destination: BusInterface.busName, path: path, interface: BusInterface.subscriptionInterface, member: member)
    }
}

/// One source of the daemon and its status, as `notifywatch`'s `source` lines show it.
public struct SourceState: Sendable, Hashable {
    /// The source's name (`power`, `sensors`, …).
    public var name: String
    /// `running`, `unavailable` or `failed`.
    public var status: String
    /// Why it is not running; empty when it is.
    public var reason: String

    static func decode(_ value: DBusValue) -> [SourceState] {
        (value.arrayElements ?? []).compactMap { element in
            guard case .structure(let fields) = element, fields.count == 3, let name = fields[0].stringValue,
                  let status = fields[1].stringValue, let reason = fields[2].stringValue
            else { return nil }
            return SourceState(name: name, status: status, reason: reason)
        }
    }
}

/// Routes decoded events to the subscription whose object path they came on; keeps what arrives
/// for a path before its subscription is registered; follows each path's `seq`.
final class Router: Sendable {
    private struct State {
        var open: [ObjectPath: AsyncStream<SubscriptionEvent>.Continuation] = [:]
        var early: [ObjectPath: [SubscriptionEvent]] = [:]
        /// The `seq` each path's next element should have.
        var nextSeq: [ObjectPath: UInt64] = [:]
        var finished = false
    }

    private let state = Mutex(State())

    /// Hands `decoded`'s events to the subscription of `path`.
    /// - Returns: whether elements are missing before them (a gap in `seq`): then call `Resync`.
    func deliver(_ decoded: EventElements.Decoded, to path: ObjectPath) -> Bool {
        state.withLock { state in
            // A subscription's first element is 1; one of ours that the process has not
            // registered yet still counts from there.
            var gap = false
            if let first = decoded.firstSeq, let last = decoded.lastSeq {
                gap = first != state.nextSeq[path, default: 1]
                state.nextSeq[path] = last &+ 1
            }
            if let continuation = state.open[path] {
                for event in decoded.events { continuation.yield(event) }
            } else if !state.finished, state.early.count < 1024 {
                state.early[path, default: []] += decoded.events
            } else {
                state.nextSeq[path] = nil
                return false
            }
            return gap
        }
    }

    func register(_ path: ObjectPath, _ continuation: AsyncStream<SubscriptionEvent>.Continuation) {
        state.withLock { state in
            guard !state.finished else {
                continuation.finish()
                return
            }
            for event in state.early.removeValue(forKey: path) ?? [] { continuation.yield(event) }
            state.open[path] = continuation
        }
    }

    func unregister(_ path: ObjectPath) {
        state.withLock { state in
            state.open[path] = nil
            state.nextSeq[path] = nil
        }
    }

    func finish(_ path: ObjectPath) {
        state.withLock { state in
            state.nextSeq[path] = nil
            return state.open.removeValue(forKey: path)
        }?.finish()
    }

    func finishAll() {
        let open = state.withLock { state in
            state.finished = true
            state.early = [:]
            state.nextSeq = [:]
            defer { state.open = [:] }
            return Array(state.open.values)
        }
        for continuation in open { continuation.finish() }
    }
}
