public import EpollLoop

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
///     connection.signals(matching: .propertiesChanged(sender: "net.hadess.SensorProxy",
///                                                     path: "/net/hadess/SensorProxy",
///                                                     interface: "net.hadess.SensorProxy")) { signal in … }
///     connection.connect()
///     context[local: key] = connection
/// }
/// ```
///
/// - Reconnection: when the bus goes away (or cannot be reached), the state becomes
///   `.disconnected` and the connection tries again after a backoff (`Configuration`), doubling
///   up to a maximum. Subscriptions and name watches are kept and set up again on the new
///   connection; outstanding calls fail with `Disconnected`. An address that cannot be resolved
///   (the session bus's, unset) is not tried again until the next `connect()`.
/// - Signals: `signals(matching:handler:)` is the one way to add a match rule: it sends the rule
///   to the bus (an asynchronous `AddMatch`, whose refusal `onMatchRuleFailure(_:)` reports) and
///   checks it locally, on the header fields first (arguments are decoded only for a signal
///   that a rule matched), so unicast signals to us are dispatched too. Well-known senders are
///   matched through their tracked owner: a signal is accepted only from the name's current
///   unique owner, once known. `peersLeaving(_:)` follows every unique name's leaving with one rule. `nameOwners(of:handler:)` is
///   the one way to follow a name's owner. For one object of one peer, `DBusProxy` puts
///   owner, properties, calls and signals together.
/// - Objects: `export(_:)` of `DBusObject`s and `DBusSubtree`s; each call is decided by a
///   `DBusDispatcher` from its header before its body is read.
/// - libdbus: this type calls none of it; `DBusLink`, `DBusMessage` and `DBusPendingCall` do.
/// - Lifetime: `close()` (or releasing it) closes and unrefs the libdbus connection.
public final class DBusConnection {
    /// Where the connection stands.
    public enum State: Sendable, Hashable, CustomStringConvertible {
        /// Not started (`connect()` not called yet).
        case idle
        /// Connecting and registering on the bus.
        case connecting
        /// Registered; `uniqueName` is ours (`:1.7`).
        case connected(uniqueName: BusName)
        /// The bus went away or could not be reached; a new attempt is scheduled when
        /// reconnection is on.
        case disconnected(DBusError)
        /// Closed for good.
        case closed

        /// The state in words (`connected as :1.7`).
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
        /// The most bytes of received messages libdbus holds for this connection
        /// (`dbus_connection_set_max_received_size`; libdbus's own default is 63 MiB). A message
        /// counts from when it is read off the socket until it is released (dispatched and no
        /// longer referenced, a method call once answered); while the total is at or past this,
        /// libdbus reads nothing more, so a flood of calls waits in the bus's queue for us, under
        /// the bus's limits, instead of in this process. One message larger than this is still
        /// read whole (the bus bounds a message's size, 128 MiB at most).
        public var maximumReceivedSize: Int
        /// The largest body, in bytes as marshalled, of a method call to an exported object:
        /// a larger one is refused with `limitsExceeded` without being read.
        public var maximumCallBodySize: Int
        /// The error a method call past a limit gets (its body's size, its method's decoding budget).
        public var limitsExceeded: ErrorName

        /// Creates a configuration.
        public init(
            reconnects: Bool = true, initialBackoff: Duration = .milliseconds(100),
            maximumBackoff: Duration = .seconds(30), defaultTimeout: Duration = .seconds(25),
            maximumReceivedSize: Int = 63 * 1024 * 1024, maximumCallBodySize: Int = 128 * 1024,
            limitsExceeded: ErrorName = .limitsExceeded
        ) {
            self.reconnects = reconnects
            self.initialBackoff = initialBackoff
            self.maximumBackoff = maximumBackoff
            self.defaultTimeout = defaultTimeout
            self.maximumReceivedSize = maximumReceivedSize
            self.maximumCallBodySize = maximumCallBodySize
            self.limitsExceeded = limitsExceeded
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
    var link: DBusLink?
    /// Bumped whenever a link is made or dropped: what an older link started is ignored.
    var generation: UInt64 = 0
    var nextID: UInt64 = 1
    var backoff: Duration
    var reconnectTimer: LoopTimer?
    var stateHandlers: [UInt64: (State) -> Void] = [:]
    var subscriptions: [UInt64: SignalSubscription] = [:]
    var nameWatches: [BusName: NameWatch] = [:]
    var watchTokens: [UInt64: BusName] = [:]
    var calls: [UInt64: OutstandingCall] = [:]
    var matchFailureHandlers: [UInt64: (DBusMatchRule, DBusError) -> Void] = [:]
    /// The exported objects and subtrees, and the decision each call to them gets.
    var dispatcher: DBusDispatcher

    /// Creates a connection on the loop whose `context` this is; nothing happens until `connect()`.
    public init(address: DBusAddress, context: LoopContext, configuration: Configuration = Configuration()) {
        self.address = address
        self.context = context
        self.configuration = configuration
        self.backoff = configuration.initialBackoff
        self.dispatcher = DBusDispatcher(limits: DBusDispatcher.Limits(
            maximumBodySize: configuration.maximumCallBodySize, limitsExceeded: configuration.limitsExceeded))
    }

    deinit {
        close()
    }

    /// Our unique name while connected.
    public var uniqueName: BusName? {
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
        matchFailureHandlers = [:]
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

    /// Cancels a subscription, name watch, state or match-rule failure handler. Unknown tokens
    /// are ignored.
    public func cancel(_ token: Token) {
        stateHandlers[token.id] = nil
        matchFailureHandlers[token.id] = nil
        if let subscription = subscriptions.removeValue(forKey: token.id) {
            if isConnected { link?.removeMatch(subscription.rule) }
            if let name = subscription.rule.wellKnownSender, let watch = nameWatches[name] {
                watch.subscriptionUsers -= 1
                retireIfUnused(watch)
            }
        }
        if let name = watchTokens.removeValue(forKey: token.id), let watch = nameWatches[name] {
            watch.handlers[token.id] = nil
            watch.departureFollowers.remove(token.id)
            retireIfUnused(watch)
        }
    }

    func setState(_ new: State) {
        guard new != state else { return }
        state = new
        for id in stateHandlers.keys.sorted() { stateHandlers[id]?(new) }
    }

    func makeID() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }
}
