import EpollLoop

/// One interface of one object of one peer, on a `DBusConnection`: the peer's current owner
/// (and an epoch that counts owner changes), its properties (a cache filled by `GetAll` and
/// kept by `PropertiesChanged`), its methods and its signals.
///
/// Loop-confined like its connection: create, use and release it on the connection's loop
/// thread; every callback runs there.
///
/// ```swift
/// let proxy = DBusProxy(connection: connection, destination: "org.freedesktop.locale1",
///                       path: "/org/freedesktop/locale1", interface: "org.freedesktop.locale1")
/// proxy.onPropertiesChange { event in … }
/// proxy.onOwnerChange { owner in … }
/// connection.connect()
/// ```
///
/// - Owner: known once the bus told it (after connecting and after every reconnection), then
///   followed through `NameOwnerChanged`. Every change bumps `epoch`; when the connection is
///   lost the owner becomes unknown (`owner == nil`, `isOwnerKnown == false`) and `epoch` is
///   bumped too, without an owner-change callback: the connection's state handlers say why.
/// - Properties (with `cachesProperties`): every new owner's properties are read with
///   `GetAll`. Every `PropertiesChanged` signal is applied and told at once; those that arrive
///   while a `GetAll` is outstanding are also applied again, in order, over its answer, so that
///   an answer taken before them does not take them back. The answer of a `GetAll` that a
///   later one superseded is ignored.
/// - Re-reads: `syncOwner(timeout:then:)` makes a round trip to the bus daemon, after which
///   the owner is current; `reloadProperties(then:)` reads every property again.
/// - Calls: `call(_:arguments:timeout:completion:)` goes to `destination`; a reply that comes
///   back after the owner changed fails with `DBusError.Name.ownerChanged`.
/// - Signals: `onSignal(_:handler:)` gets the interface's signals from the current owner.
public final class DBusProxy {
    /// What happened to the cached properties.
    public enum PropertiesEvent: Sendable, Hashable {
        /// `GetAll` answered: every property, with the changes that arrived meanwhile (already
        /// told as `changed`) applied over the answer.
        case loaded([String: DBusValue])
        /// A `PropertiesChanged` signal, applied to the cache (told when it arrives, also while a
        /// `GetAll` is outstanding).
        case changed(DBusPropertiesChange)
        /// `GetAll` failed (not when the connection went away: that is a state change).
        case loadFailed(DBusError)
        /// A `PropertiesChanged` signal whose arguments are not `(s, a{sv}, as)`; skipped.
        case malformedSignal(DBusError)
    }

    /// The connection it uses.
    public let connection: DBusConnection
    /// The peer: a well-known name (followed across owners) or a unique name.
    public let destination: BusName
    /// The object.
    public let path: ObjectPath
    /// The interface.
    public let interface: InterfaceName
    /// Whether it keeps the interface's properties (`GetAll`, `PropertiesChanged`).
    public let cachesProperties: Bool

    /// The destination's current owner; `nil` when it has none or it is not known.
    public private(set) var owner: BusName?
    /// Whether `owner` is known (the bus said so since the connection was made).
    public private(set) var isOwnerKnown = false
    /// Bumped at every change of the owner, including to unknown when the connection is lost.
    public private(set) var epoch: UInt64 = 0
    /// The cached properties by name (empty without `cachesProperties`, without an owner, or
    /// before the first `GetAll` answered).
    public internal(set) var properties: [String: DBusValue] = [:]

    var connectionTokens: [DBusConnection.Token] = []
    var ownerHandlers: [UInt64: (BusName?) -> Void] = [:]
    var propertyHandlers: [UInt64: (PropertiesEvent) -> Void] = [:]
    var signalTokens: [UInt64: DBusConnection.Token] = [:]
    /// The outstanding `GetAll`, when there is one.
    var load: PropertiesLoad?
    var loadNumber: UInt64 = 0
    private var closed = false

    /// The `GetAll` in flight and the changes that arrived since it was sent (applied again over its answer).
    struct PropertiesLoad {
        let number: UInt64
        var queued: [DBusPropertiesChange] = []
        var completions: [() -> Void] = []
    }

    /// Binds a proxy to `destination`, `path` and `interface` on `connection`; it follows the
    /// owner (and reads the properties with `cachesProperties`) from now on. With
    /// `followsDepartures` false, the owner leaving is not asked for (a service that exits when
    /// idle and is activated again): the proxy keeps the owner that left, which sends nothing more,
    /// until a new one arrives (`DBusConnection.nameOwners(of:followsDepartures:handler:)`).
    public init(
        connection: DBusConnection, destination: BusName, path: ObjectPath, interface: InterfaceName,
        cachesProperties: Bool = true, followsDepartures: Bool = true
    ) {
        self.connection = connection
        self.destination = destination
        self.path = path
        self.interface = interface
        self.cachesProperties = cachesProperties
        connectionTokens.append(connection.onStateChange { [weak self] state in
            switch state {
            case .disconnected, .closed: self?.ownerLost()
            default: break
            }
        })
        if cachesProperties {
            connectionTokens.append(connection.signals(matching: .propertiesChanged(
                sender: destination, path: path, interface: interface)) { [weak self] signal in
                self?.propertiesChanged(signal)
            })
        }
        connectionTokens.append(connection.nameOwners(of: destination, followsDepartures: followsDepartures) { [weak self] owner in
            self?.ownerChanged(to: owner)
        })
    }

    deinit {
        close()
    }

    /// Stops following the peer: every handler is dropped and the connection's match rules
    /// and name watch for it are cancelled.
    public func close() {
        guard !closed else { return }
        closed = true
        for token in connectionTokens + signalTokens.values { connection.cancel(token) }
        connectionTokens = []
        signalTokens = [:]
        ownerHandlers = [:]
        propertyHandlers = [:]
        let completions = load?.completions ?? []
        load = nil
        for completion in completions { completion() }
    }

    /// Calls `handler` with the owner at every change of the known owner (`nil`: the name has
    /// none), until `cancel(_:)`.
    @discardableResult
    public func onOwnerChange(_ handler: @escaping (BusName?) -> Void) -> DBusConnection.Token {
        let id = connection.makeID()
        ownerHandlers[id] = handler
        return DBusConnection.Token(id: id)
    }

    /// Calls `handler` with every `PropertiesEvent`, until `cancel(_:)`.
    @discardableResult
    public func onPropertiesChange(_ handler: @escaping (PropertiesEvent) -> Void) -> DBusConnection.Token {
        let id = connection.makeID()
        propertyHandlers[id] = handler
        return DBusConnection.Token(id: id)
    }

    /// Calls `handler` with every signal `member` of the interface on the path from the
    /// current owner, until `cancel(_:)`. Adds a match rule (`DBusConnection.signals(matching:handler:)`).
    @discardableResult
    public func onSignal(_ member: MemberName, handler: @escaping (DBusSignal) -> Void) -> DBusConnection.Token {
        let id = connection.makeID()
        let rule = DBusMatchRule(sender: destination, path: path, interface: interface, member: member)
        signalTokens[id] = connection.signals(matching: rule) { [weak self] signal in
            guard let self, self.isFromOwner(signal) else { return }
            handler(signal)
        }
        return DBusConnection.Token(id: id)
    }

    /// Cancels a handler. Unknown tokens are ignored.
    public func cancel(_ token: DBusConnection.Token) {
        ownerHandlers[token.id] = nil
        propertyHandlers[token.id] = nil
        if let signalToken = signalTokens.removeValue(forKey: token.id) { connection.cancel(signalToken) }
    }

    /// Calls `member` of the interface on the destination; `completion` gets the return values
    /// or the error (see `DBusConnection.call`), or `DBusError.Name.ownerChanged` when the
    /// owner changed before the reply came.
    public func call(
        _ member: MemberName, arguments: [DBusValue] = [], timeout: Duration? = nil,
        completion: @escaping (Result<[DBusValue], DBusError>) -> Void
    ) {
        let epoch = self.epoch
        connection.call(
            destination: destination, path: path, interface: interface, member: member, arguments: arguments,
            timeout: timeout
        ) { [weak self] result in
            guard let self, self.epoch == epoch else {
                if case .failure(let error) = result, error.name == DBusError.Name.disconnected {
                    completion(result)
                } else {
                    completion(.failure(.ownerChanged(member: member)))
                }
                return
            }
            completion(result)
        }
    }

    /// Makes a round trip to the bus daemon (`GetNameOwner` of `destination`) and calls `done`
    /// with its reply: the daemon answers after every message it queued for this connection
    /// before (a `NameOwnerChanged` sent while the process stood stopped), and the reply is
    /// dispatched after them, so `owner` is current when `done` runs. `done` is also called
    /// when the round trip fails (disconnected, timed out) or the proxy is gone.
    public func syncOwner(timeout: Duration? = nil, then done: @escaping () -> Void) {
        connection.call(
            destination: .bus, path: .bus, interface: .bus, member: "GetNameOwner",
            arguments: [.string(destination.rawValue)], timeout: timeout
        ) { _ in done() }
    }

    // MARK: Owner

    private func ownerChanged(to newOwner: BusName?) {
        guard !closed, !isOwnerKnown || newOwner != owner else { return }
        isOwnerKnown = true
        owner = newOwner
        epoch &+= 1
        properties = [:]
        if cachesProperties, newOwner != nil { reloadProperties() }
        for id in ownerHandlers.keys.sorted() {
            guard owner == newOwner else { return }
            ownerHandlers[id]?(newOwner)
        }
    }

    private func ownerLost() {
        guard isOwnerKnown || owner != nil else { return }
        isOwnerKnown = false
        owner = nil
        epoch &+= 1
        properties = [:]
    }
}
