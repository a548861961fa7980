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

