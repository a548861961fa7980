/// The per-window proxies of a window-list manager and the events they sent that wait to be
/// handed over: what `ForeignToplevelManager` and `PlasmaWindowManager` keep alike, as a plain
/// struct. The managers own the proxies; this only numbers them (an id per window, from 1) and
/// holds the events.
struct WindowProxies<Event> {
    /// Whether the manager is stopped: no proxy is taken and no event held after this.
    private(set) var isStopped = false
    /// The windows' proxies and their ids.
    private var ids: [OpaquePointer: UInt64] = [:]
    private var nextID: UInt64 = 1
    private var pending: [Event] = []
    private var delivered = 0

    /// How many windows are open.
    var count: Int { ids.count }
    /// Whether events wait to be handed over.
    var hasPending: Bool { delivered < pending.count }

    /// A window's new proxy, numbered, with `announce(id)` held: whether it was taken (not once
    /// stopped; the caller destroys the proxy then).
    @discardableResult
    mutating func add(_ proxy: OpaquePointer, announce: (UInt64) -> Event) -> Bool {
        guard !isStopped else { return false }
        let id = nextID
        nextID += 1
        ids[proxy] = id
        pending.append(announce(id))
        return true
    }

    /// Holds `event(id)` for the window of `proxy`, unless stopped or the proxy is not one of them.
    mutating func hold(from proxy: OpaquePointer, _ event: (UInt64) -> Event) {
        guard !isStopped, let id = ids[proxy] else { return }
        pending.append(event(id))
    }

    /// Holds an event of the manager itself, unless stopped.
    mutating func hold(_ event: Event) {
        guard !isStopped else { return }
        pending.append(event)
    }

    /// The window of `proxy` is gone: whether it was one of them (its proxy is then the caller's
    /// to destroy), with `event(id)` held.
    mutating func remove(_ proxy: OpaquePointer, _ event: (UInt64) -> Event) -> Bool {
        guard !isStopped, let id = ids.removeValue(forKey: proxy) else { return false }
        pending.append(event(id))
        return true
    }

    /// The id of `proxy`, if it is one of them.
    func id(of proxy: OpaquePointer?) -> UInt64? {
        proxy.flatMap { ids[$0] }
    }

    /// The next event to hand over, if any.
    mutating func next() -> Event? {
        guard delivered < pending.count else {
            dropPending()
            return nil
        }
        defer { delivered += 1 }
        return pending[delivered]
    }

    /// Drops the events not handed over yet.
    mutating func dropPending() {
        pending = []
        delivered = 0
    }

    /// Stops: the proxies to destroy (every window's), none after this; held events stay until
    /// dropped.
    mutating func stop() -> [OpaquePointer] {
        isStopped = true
        defer { ids = [:] }
        return Array(ids.keys)
    }
}
