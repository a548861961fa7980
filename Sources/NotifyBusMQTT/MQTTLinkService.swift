import EpollLoop
import Logging
import Mosquitto
import NotifyBus
import NotifyBusSources
import OrderedCollections
import SystemSupport

/// The bus published to an MQTT broker (specification: Publishing a fleet to MQTT), on an existing event loop: one
/// retained QoS 1 topic per key, `$online` with a will, and the link a suspended subscriber of
/// the bus while the broker cannot be reached.
///
/// ```swift
/// let link = MQTTLinkService(configuration: configuration, bus: bus, loop: loop, logger: logger)
/// try link.start { _, status in print("mqtt", status) }
/// …
/// await link.stop()   // `$online` false, then DISCONNECT
/// ```
///
/// The handle is `Sendable`; the link itself (its libmosquitto client, subscription and timers)
/// lives in the loop's storage and runs on the loop thread, sharing it with whatever else the
/// loop serves (notifybusd's D-Bus connection and sources).
public final class MQTTLinkService: Sendable {
    /// What it publishes and where.
    public let configuration: MQTTLinkConfiguration
    /// The bus it publishes.
    public let bus: NotificationBus
    /// The loop it runs on.
    public let loop: EventLoopThread
    private let logger: Logger
    private let key = LoopLocalKey<MQTTLink>()

    /// A link of `bus` on `loop`; nothing happens before `start`.
    public init(configuration: MQTTLinkConfiguration, bus: NotificationBus, loop: EventLoopThread, logger: Logger) {
        self.configuration = configuration
        self.bus = bus
        self.loop = loop
        self.logger = logger
    }

    /// Starts the link: subscribes and connects. `onStatus` is told the link's status (the
    /// `mqtt` source's) on the loop thread, with the loop's context, each time it changes.
    /// - Throws: `EventLoopError.shutDown` when the loop no longer runs.
    public func start(onStatus: @escaping @Sendable (LoopContext, SourceStatus) -> Void) throws(EventLoopError) {
        let key = self.key
        let loop = self.loop
        let configuration = self.configuration
        let bus = self.bus
        let logger = self.logger
        try loop.execute { context in
            guard context[local: key] == nil else { return }
            let link = MQTTLink(
                configuration: configuration, bus: bus, context: context, logger: logger,
                onStatus: { status in onStatus(context, status) },
                onReady: { try? loop.execute { context in context[local: key]?.deliver() } },
                lookUp: key.hostLookup(on: loop))
            context[local: key] = link
            link.start()
        }
    }

    /// Stops cleanly: publishes `$online` false, waits (at most 3 s) for the broker to take it,
    /// disconnects, and releases the link.
    public func stop() async {
        let key = self.key
        await key.withValue(on: loop) { link, context, done in
            link.stop {
                context[local: key] = nil
                done()
            }
        }
    }

    /// Where the link is now (for tests and diagnostics); `nil` when it does not run.
    public func phase() async -> MQTTLinkState.Phase? {
        let key = self.key
        return try? await loop.submit { context in context[local: key]?.state.phase } ?? nil
    }

    /// How many publishes wait for the broker's acknowledgement, and how many messages are owed.
    public func backlog() async -> (inflight: Int, unsent: Int)? {
        let key = self.key
        let counts: (Int, Int)?? = try? await loop.submit { context in
            context[local: key].map { ($0.state.inflight.count, $0.state.unsent.count) }
        }
        guard let counts = counts ?? nil else { return nil }
        return (counts.0, counts.1)
    }
}
