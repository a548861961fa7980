import CDBus
import EpollLoop

/// A connection to a message bus that lives on an `EventLoopThread` and survives the bus going away.
///
/// Create, use and release it on its loop's thread only (inside `EventLoopThread.execute`
/// jobs and the handlers they register; keep it in the loop's storage, `LoopContext[local:]`).
/// Everything it calls back (replies, signals, owner changes, state changes) runs there too.
/// libdbus's socket watches are the loop's fd registrations and its timeouts the loop's timers;
/// nothing on the loop thread blocks: even the `Hello` that registers on the bus is an
/// asynchronous call. For async/await from any thread, use `DBusClient`.
///
/// ```swift
/// try loop.execute { context in
///     let connection = DBusConnection(address: .system, context: context)
///     connection.subscribe(.propertiesChanged(sender: "net.hadess.SensorProxy",
///                                             path: "/net/hadess/SensorProxy",
///                                             interface: "net.hadess.SensorProxy")) { signal in … }
///     connection.connect()
///     context[local: key] = connection
/// }
/// ```
///
/// - Reconnection: when the bus goes away (or cannot be reached), the state becomes
///   `.disconnected` and the connection tries again after a backoff (`Configuration`), doubling
///   up to a maximum. Subscriptions and name watches are kept and set up again on the new
///   connection; outstanding calls fail with `Disconnected`.
/// - Signals: `subscribe(_:handler:)` sends the match rule to the bus and checks it locally, so
///   unicast signals to us are dispatched too. Well-known senders are matched through their
///   tracked owner.
/// - Lifetime: `close()` (or releasing it) closes and unrefs the libdbus connection.
public final class DBusConnection {
    /// Where the connection stands.
    public enum State: Sendable, Hashable, CustomStringConvertible {
        /// Not started (`connect()` not called yet).
        case idle
        /// Connecting and registering on the bus.
        case connecting
        /// Registered; `uniqueName` is ours (`:1.7`).
        case connected(uniqueName: String)
        /// The bus went away or could not be reached; a new attempt is scheduled when
        /// reconnection is on.
        case disconnected(DBusError)
        /// Closed for good.
        case closed

        public var description: String {
            switch self {
            case .idle: "idle"
            case .connecting: "connecting"
            case .connected(let name): "connected as \(name)"
            case .disconnected(let error): "disconnected: \(error)"
            case .closed: "closed"
            }
        }
    }

    /// How the connection behaves.
    public struct Configuration: Sendable {
        /// Whether to connect again after the bus went away or could not be reached.
        public var reconnects: Bool
        /// The first wait before connecting again; it doubles after each failed attempt.
        public var initialBackoff: Duration
        /// The longest wait between attempts.
        public var maximumBackoff: Duration
        /// The timeout of method calls that give none.
        public var defaultTimeout: Duration

        /// Creates a configuration.
        public init(
            reconnects: Bool = true, initialBackoff: Duration = .milliseconds(100),
            maximumBackoff: Duration = .seconds(30), defaultTimeout: Duration = .seconds(25)
        ) {
            self.reconnects = reconnects
            self.initialBackoff = initialBackoff
            self.maximumBackoff = maximumBackoff
            self.defaultTimeout = defaultTimeout
        }
    }

    /// Identifies a subscription, a name watch or a state handler, to cancel it.
    public struct Token: Sendable, Hashable {
        let id: UInt64
    }

    /// The bus it connects to.
    public let address: DBusAddress
    /// Its configuration.
    public let configuration: Configuration
    /// Where it stands now.
    public private(set) var state: State = .idle

    unowned let context: LoopContext
    private var link: DBusLink?
    private var generation: UInt64 = 0
    private var nextID: UInt64 = 1
    private var backoff: Duration
    private var reconnectTimer: LoopTimer?
    private var stateHandlers: [UInt64: (State) -> Void] = [:]
    private var subscriptions: [UInt64: SignalSubscription] = [:]
    private var nameWatches: [String: NameWatch] = [:]
    private var watchTokens: [UInt64: String] = [:]
    private var calls: [UInt64: OutstandingCall] = [:]

    private struct SignalSubscription {
        let rule: DBusMatchRule
        let handler: (DBusSignal) -> Void
    }

    private enum Owner: Equatable {
        case unknown
        case known(String?)
    }

    private final class NameWatch {
        let name: String
        var owner: Owner = .unknown
        var handlers: [UInt64: (String?) -> Void] = [:]
        /// Subscriptions whose sender is this name.
        var subscriptionUsers = 0
        init(name: String) { self.name = name }
        var isUnused: Bool { handlers.isEmpty && subscriptionUsers == 0 }
        var rule: DBusMatchRule {
            DBusMatchRule(
                sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "NameOwnerChanged", arg0: name)
        }
    }

    private struct OutstandingCall {
        let pending: OpaquePointer
        let completion: (Result<DBusMessage, DBusError>) -> Void
    }

    /// Creates a connection on the loop whose `context` this is; nothing happens until `connect()`.
    public init(address: DBusAddress, context: LoopContext, configuration: Configuration = Configuration()) {
        self.address = address
        self.context = context
        self.configuration = configuration
        self.backoff = configuration.initialBackoff
    }

    deinit {
        close()
    }

    /// Our unique name while connected.
    public var uniqueName: String? {
        if case .connected(let name) = state { return name }
        return nil
    }

    /// Whether it is registered on the bus.
    public var isConnected: Bool { uniqueName != nil }

    // MARK: Connecting

    /// Starts connecting (and, per the configuration, reconnecting whenever the bus goes away).
    /// Calling it again while connecting or connected does nothing.
    public func connect() {
        switch state {
        case .idle, .disconnected: attemptConnection()
        case .connecting, .connected, .closed: return
        }
    }

    /// Closes the connection for good: outstanding calls fail with `Disconnected`, handlers are
    /// dropped, the libdbus connection is closed and released.
    public func close() {
        guard state != .closed else { return }
        if let reconnectTimer { context.cancelTimer(reconnectTimer) }
        reconnectTimer = nil
        dropLink(DBusError.disconnected("the connection was closed"))
        state = .closed
        let handlers = stateHandlers.values
        stateHandlers = [:]
        subscriptions = [:]
        nameWatches = [:]
        watchTokens = [:]
        for handler in handlers { handler(.closed) }
    }

    /// Calls `handler` with every change of `state` (not with the current one).
    @discardableResult
    public func onStateChange(_ handler: @escaping (State) -> Void) -> Token {
        let id = makeID()
        stateHandlers[id] = handler
        return Token(id: id)
    }

    /// Cancels a subscription, name watch or state handler. Unknown tokens are ignored.
    public func cancel(_ token: Token) {
        stateHandlers[token.id] = nil
        if let subscription = subscriptions.removeValue(forKey: token.id) {
            if isConnected, let link { removeMatch(subscription.rule, on: link) }
            if let name = subscription.rule.wellKnownSender, let watch = nameWatches[name] {
                watch.subscriptionUsers -= 1
                retireIfUnused(watch)
            }
        }
        if let name = watchTokens.removeValue(forKey: token.id), let watch = nameWatches[name] {
            watch.handlers[token.id] = nil
            retireIfUnused(watch)
        }
    }

    private func attemptConnection() {
        reconnectTimer = nil
        setState(.connecting)
        let link: DBusLink
        do {
            let resolved = try address.resolve()
            link = try DBusLink(address: resolved, context: context)
        } catch {
            connectionFailed(error)
            return
        }
        generation &+= 1
        let current = generation
        self.link = link
        link.onMessage = { [weak self] message in self?.received(message, generation: current) }
        let hello: DBusMessage
        do {
            hello = try DBusMessage.methodCall(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus", member: "Hello")
        } catch {
            connectionFailed(error)
            return
        }
        send(hello, timeout: configuration.defaultTimeout) { [weak self] result in
            guard let self, self.generation == current, self.link != nil else { return }
            switch result {
            case .success(let reply):
                guard let name = (try? reply.arguments())?.first?.stringValue else {
                    self.connectionFailed(DBusError(name: DBusError.Name.failed, message: "Hello returned no unique name"))
                    return
                }
                self.registered(as: name, link: link)
            case .failure(let error):
                self.connectionFailed(error)
            }
        }
    }

    private func registered(as name: String, link: DBusLink) {
        _ = name.withCString { dbus_bus_set_unique_name(link.pointer, $0) }
        backoff = configuration.initialBackoff
        for subscription in subscriptions.values { addMatch(subscription.rule, on: link) }
        for watch in nameWatches.values { start(watch, on: link) }
        setState(.connected(uniqueName: name))
    }

    private func connectionFailed(_ error: DBusError) {
        dropLink(error)
        setState(.disconnected(error))
        scheduleReconnect()
    }

    private func scheduleReconnect() {
        guard configuration.reconnects, state != .closed, reconnectTimer == nil else { return }
        let delay = backoff
        backoff = min(backoff * 2, configuration.maximumBackoff)
        reconnectTimer = context.scheduleTimer(after: delay) { [weak self] in
            guard let self else { return }
            self.reconnectTimer = nil
            if case .disconnected = self.state { self.attemptConnection() }
        }
    }

    /// Shuts the link down, fails outstanding calls, forgets owners.
    private func dropLink(_ error: DBusError) {
        guard let link else { return }
        self.link = nil
        generation &+= 1
        let outstanding = calls
        calls = [:]
        for call in outstanding.values {
            dbus_pending_call_cancel(call.pending)
            dbus_pending_call_unref(call.pending)
        }
        link.shutDown()
        for watch in nameWatches.values { watch.owner = .unknown }
        for (_, call) in outstanding.sorted(by: { $0.key < $1.key }) { call.completion(.failure(error)) }
    }

    private func setState(_ new: State) {
        guard new != state else { return }
        state = new
        for id in stateHandlers.keys.sorted() { stateHandlers[id]?(new) }
    }

    // MARK: Messages

    private func received(_ message: DBusMessage, generation: UInt64) {
        guard generation == self.generation else { return }
        guard message.type == NOTIFYBUS_DBUS_MESSAGE_TYPE_SIGNAL else { return }
        if message.isSignal(path: "/org/freedesktop/DBus/Local", interface: "org.freedesktop.DBus.Local", member: "Disconnected") {
            // Leave libdbus's dispatch before tearing the connection down.
            context.runSoon { [weak self] in
                guard let self, self.generation == generation else { return }
                self.connectionFailed(.disconnected("the bus closed the connection"))
            }
            return
        }
        guard let arguments = try? message.arguments() else { return }
        let signal = DBusSignal(
            sender: message.sender ?? "", destination: message.destination, path: message.path ?? "",
            interface: message.interface ?? "", member: message.member ?? "", signature: message.signature,
            arguments: arguments)
        if signal.sender == "org.freedesktop.DBus", signal.interface == "org.freedesktop.DBus",
           signal.member == "NameOwnerChanged", arguments.count == 3,
           let name = arguments[0].stringValue, let newOwner = arguments[2].stringValue,
           let watch = nameWatches[name]
        {
            setOwner(newOwner.isEmpty ? nil : newOwner, of: watch)
        }
        for id in subscriptions.keys.sorted() {
            guard generation == self.generation, let subscription = subscriptions[id] else { continue }
            if matches(subscription.rule, signal) { subscription.handler(signal) }
        }
    }

    private func matches(_ rule: DBusMatchRule, _ signal: DBusSignal) -> Bool {
        if let path = rule.path, path != signal.path { return false }
        if let interface = rule.interface, interface != signal.interface { return false }
        if let member = rule.member, member != signal.member { return false }
        if let arg0 = rule.arg0, signal.arguments.first?.stringValue != arg0 { return false }
        if let name = rule.wellKnownSender {
            switch nameWatches[name]?.owner ?? .unknown {
            case .unknown: return true  // the bus filtered broadcasts by the name for us
            case .known(nil): return false
            case .known(let owner?): return owner == signal.sender
            }
        }
        if let sender = rule.sender, sender != signal.sender { return false }
        return true
    }

    /// Sends `message` and calls `completion` with the reply (on the loop thread).
    private func send(
        _ message: DBusMessage, timeout: Duration?, completion: @escaping (Result<DBusMessage, DBusError>) -> Void
    ) {
        guard let link, !link.isShutDown else {
            context.runSoon { completion(.failure(.disconnected())) }
            return
        }
        let milliseconds = Self.milliseconds(timeout ?? configuration.defaultTimeout)
        var pending: OpaquePointer?
        guard dbus_connection_send_with_reply(link.pointer, message.pointer, &pending, milliseconds) != 0 else {
            context.runSoon { completion(.failure(.noMemory)) }
            return
        }
        guard let pending else {
            context.runSoon { completion(.failure(.disconnected())) }
            return
        }
        let id = makeID()
        calls[id] = OutstandingCall(pending: pending, completion: completion)
        let token = Unmanaged.passRetained(CallToken(id: id, connection: self)).toOpaque()
        let set = dbus_pending_call_set_notify(pending, { pending, data in
            guard let pending, let data else { return }
            let token = Unmanaged<CallToken>.fromOpaque(data).takeUnretainedValue()
            token.connection?.completeCall(token.id, pending: pending)
        }, token, { data in
            if let data { Unmanaged<CallToken>.fromOpaque(data).release() }
        })
        if set == 0 {
            Unmanaged<CallToken>.fromOpaque(token).release()
            calls[id] = nil
            dbus_pending_call_cancel(pending)
            dbus_pending_call_unref(pending)
            context.runSoon { completion(.failure(.noMemory)) }
            return
        }
        // It may have completed already (the link was lost while sending).
        if dbus_pending_call_get_completed(pending) != 0 { completeCall(id, pending: pending) }
    }

    fileprivate func completeCall(_ id: UInt64, pending: OpaquePointer) {
        guard let call = calls.removeValue(forKey: id) else { return }
        let raw = dbus_pending_call_steal_reply(pending)
        dbus_pending_call_unref(call.pending)
        guard let raw else {
            call.completion(.failure(DBusError(name: DBusError.Name.noReply, message: "no reply")))
            return
        }
        let reply = DBusMessage(adopting: raw)
        if reply.type == NOTIFYBUS_DBUS_MESSAGE_TYPE_ERROR {
            call.completion(.failure(reply.error()))
        } else {
            call.completion(.success(reply))
        }
    }

    static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 1 }
        if seconds >= Int64(Int32.max / 1000) { return NOTIFYBUS_DBUS_TIMEOUT_INFINITE }
        return Int32(seconds) * 1000 + max(Int32(attoseconds / 1_000_000_000_000_000), seconds == 0 ? 1 : 0)
    }

    private func makeID() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }

    // MARK: Calling

    /// Calls `interface.member` on `path` of `destination` and calls `reply` on the loop thread
    /// with its return values, or the error: the peer's (name and message as sent),
    /// `NoReply` after `timeout` (the configuration's default when `nil`), `Disconnected` when
    /// the bus is not connected or goes away, `InvalidArgs` for names or values that cannot be sent.
    /// Wraps `dbus_connection_send_with_reply` and `dbus_pending_call_set_notify`.
    public func call(
        destination: String?, path: String, interface: String?, member: String, arguments: [DBusValue] = [],
        timeout: Duration? = nil, reply: @escaping (Result<[DBusValue], DBusError>) -> Void
    ) {
        let message: DBusMessage
        do {
            message = try DBusMessage.methodCall(destination: destination, path: path, interface: interface, member: member)
            try message.append(arguments)
        } catch {
            context.runSoon { reply(.failure(error)) }
            return
        }
        send(message, timeout: timeout) { result in
            reply(result.flatMap { message in Result { () throws(DBusError) in try message.arguments() } })
        }
    }

    /// Emits a signal: broadcast, or unicast to `destination`. Wraps `dbus_connection_send`.
    /// - Throws: `DBusError` (`InvalidArgs`) for invalid names or values, `Disconnected` when not connected.
    public func emitSignal(
        path: String, interface: String, member: String, arguments: [DBusValue] = [], destination: String? = nil
    ) throws(DBusError) {
        let message = try DBusMessage.signal(path: path, interface: interface, member: member, destination: destination)
        try message.append(arguments)
        guard let link, isConnected else { throw .disconnected() }
        try link.send(message)
    }

    // MARK: Signals

    /// Calls `handler` on the loop thread for every signal that matches `rule`, broadcast or
    /// unicast to us, until `cancel(_:)`. The rule is sent to the bus now (when connected) and
    /// after every reconnection. Wraps `dbus_bus_add_match`.
    @discardableResult
    public func subscribe(_ rule: DBusMatchRule, handler: @escaping (DBusSignal) -> Void) -> Token {
        let id = makeID()
        subscriptions[id] = SignalSubscription(rule: rule, handler: handler)
        if let name = rule.wellKnownSender {
            let (watch, isNew) = nameWatch(name)
            watch.subscriptionUsers += 1
            if isNew, isConnected, let link { start(watch, on: link) }
        }
        if isConnected, let link { addMatch(rule, on: link) }
        return Token(id: id)
    }

    private func addMatch(_ rule: DBusMatchRule, on link: DBusLink) {
        rule.text.withCString { dbus_bus_add_match(link.pointer, $0, nil) }
    }

    private func removeMatch(_ rule: DBusMatchRule, on link: DBusLink) {
        rule.text.withCString { dbus_bus_remove_match(link.pointer, $0, nil) }
    }

    // MARK: Name owners

    /// Tracks the owner of the well-known `name`: `handler` gets the owner's unique name, or
    /// `nil` when the name has none, once it is known (after connecting, and after every
    /// reconnection) and at every change (`NameOwnerChanged`), until `cancel(_:)`.
    @discardableResult
    public func watchNameOwner(_ name: String, handler: @escaping (String?) -> Void) -> Token {
        let id = makeID()
        let (watch, isNew) = nameWatch(name)
        watch.handlers[id] = handler
        watchTokens[id] = name
        if isNew, isConnected, let link {
            start(watch, on: link)
        } else if case .known(let owner) = watch.owner {
            context.runSoon { [weak watch] in
                guard let watch, let handler = watch.handlers[id], watch.owner == .known(owner) else { return }
                handler(owner)
            }
        }
        return Token(id: id)
    }

    /// The owner of `name` as last seen: `.some(nil)` for no owner, `nil` when not known (yet).
    public func knownOwner(of name: String) -> String?? {
        guard case .known(let owner) = nameWatches[name]?.owner else { return nil }
        return .some(owner)
    }

    private func nameWatch(_ name: String) -> (NameWatch, Bool) {
        if let watch = nameWatches[name] { return (watch, false) }
        let watch = NameWatch(name: name)
        nameWatches[name] = watch
        return (watch, true)
    }

    private func start(_ watch: NameWatch, on link: DBusLink) {
        addMatch(watch.rule, on: link)
        let current = generation
        call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "GetNameOwner", arguments: [.string(watch.name)]
        ) { [weak self, weak watch] result in
            guard let self, let watch, self.generation == current, self.nameWatches[watch.name] === watch else { return }
            switch result {
            case .success(let values):
                self.setOwner(values.first?.stringValue, of: watch)
            case .failure(let error) where error.name == DBusError.Name.nameHasNoOwner:
                self.setOwner(nil, of: watch)
            case .failure:
                break  // disconnected: tried again after reconnecting
            }
        }
    }

    private func setOwner(_ owner: String?, of watch: NameWatch) {
        guard watch.owner != .known(owner) else { return }
        watch.owner = .known(owner)
        for id in watch.handlers.keys.sorted() {
            guard watch.owner == .known(owner) else { return }
            watch.handlers[id]?(owner)
        }
    }

    private func retireIfUnused(_ watch: NameWatch) {
        guard watch.isUnused, nameWatches[watch.name] === watch else { return }
        nameWatches[watch.name] = nil
        if isConnected, let link { removeMatch(watch.rule, on: link) }
    }
}

/// What a pending call's notify function gets: the call's id and the connection, weakly.
private final class CallToken {
    let id: UInt64
    weak var connection: DBusConnection?
    init(id: UInt64, connection: DBusConnection) {
        self.id = id
        self.connection = connection
    }
}
