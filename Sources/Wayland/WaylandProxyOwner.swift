/// An object with proxies on a connection: it collects its events during a dispatch and hands
/// them over after, and destroys its proxies when the connection closes.
protocol WaylandProxyOwner: AnyObject {
    /// Whether events wait to be handed over.
    var hasPendingEvents: Bool { get }
    /// Hands over the waiting events.
    func deliverEvents()
    /// Destroys every proxy (the connection is about to disconnect); no event after this.
    func releaseProxies()
}

struct ProxyOwnerReference {
    weak var object: (any WaylandProxyOwner)?
}


/// A listener table handed to libwayland (`wl_proxy_add_listener` keeps the pointer), allocated
/// once and freed with its owner, after the owner destroyed the proxies that use it.
final class ListenerTable<Listener> {
    let pointer: UnsafeMutablePointer<Listener>

    init(_ listener: Listener) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: listener)
    }

    deinit {
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }
}

/// A window-list manager (`ForeignToplevelManager`, `PlasmaWindowManager`): a manager proxy, a
/// proxy per window in `proxies`, and the events handed to `onEvent` after each dispatch.
protocol WindowListProxyOwner: WaylandProxyOwner {
    associatedtype Event
    var display: WaylandDisplay { get }
    var proxies: WindowProxies<Event> { get set }
    var onEvent: (Event) -> Void { get }
    /// Destroys every proxy, with the protocol's own requests first when `sendingRequests`.
    func destroyProxies(sendingRequests: Bool)
}

extension WindowListProxyOwner {
    var hasPendingEvents: Bool { proxies.hasPending }

    func deliverEvents() {
        while let event = proxies.next() { onEvent(event) }
    }

    /// The connection is closing: every proxy goes, and no event is handed over.
    func releaseProxies() {
        proxies.dropPending()
        guard !proxies.isStopped else { return }
        destroyProxies(sendingRequests: false)
    }

    /// Stops: destroys every proxy with the protocol's requests and flushes them while the
    /// connection is usable; no event is handed over after this.
    func stopProxies() {
        proxies.dropPending()
        guard !proxies.isStopped else { return }
        let usable = !display.isClosed && display.failure == nil
        destroyProxies(sendingRequests: usable)
        if usable { try? display.flush() }
    }
}
