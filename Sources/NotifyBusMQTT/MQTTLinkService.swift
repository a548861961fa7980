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
    public var configuration: MQTTLinkConfiguration { slot.configuration }
    /// The bus it publishes.
    public var bus: NotificationBus { slot.bus }
    /// The loop it runs on.
    public var loop: EventLoopThread { slot.loop }
    private let slot: LoopDriverSlot<MQTTLinkConfiguration, MQTTLink>

    /// A link of `bus` on `loop`; nothing happens before `start`.
    public init(configuration: MQTTLinkConfiguration, bus: NotificationBus, loop: EventLoopThread, logger: Logger) {
        slot = LoopDriverSlot(configuration: configuration, bus: bus, loop: loop, logger: logger)
    }

    /// Starts the link: subscribes and connects. `onStatus` is told the link's status (the
    /// `mqtt` source's) on the loop thread, with the loop's context, each time it changes.
    /// - Throws: `EventLoopError.shutDown` when the loop no longer runs.
    public func start(onStatus: @escaping @Sendable (LoopContext, SourceStatus) -> Void) throws(EventLoopError) {
        try slot.start({ slot, context in
            MQTTLink(
                configuration: slot.configuration, bus: slot.bus, context: context, logger: slot.logger,
                onStatus: { status in onStatus(context, status) },
                onReady: { try? slot.loop.execute { context in context[local: slot.key]?.deliver() } },
                lookUp: slot.key.hostLookup(on: slot.loop))
        }, then: { $0.start() })
    }

    /// Stops cleanly: publishes `$online` false, waits (at most 3 s) for the broker to take it,
    /// disconnects, and releases the link.
    public func stop() async {
        let key = slot.key
        await key.withValue(on: slot.loop) { link, context, done in
            link.stop {
                context[local: key] = nil
                done()
            }
        }
    }

    /// Where the link is now (for tests and diagnostics); `nil` when it does not run.
    public func phase() async -> MQTTLinkState.Phase? {
        await slot.read { $0.state.phase }
    }

    /// How many publishes wait for the broker's acknowledgement, and how many messages are owed.
    public func backlog() async -> (inflight: Int, unsent: Int)? {
        await slot.read { (inflight: $0.state.inflight.count, unsent: $0.state.unsent.count) }
    }
}
