public import EpollLoop
public import Logging
public import NotifyBus
import OrderedCollections
public import SourceFramework

/// The bus published to an MQTT broker (specification: Publishing a fleet to MQTT), as a source of
/// the bus it publishes: one retained QoS 1 topic per key, `$online` with a will, and the link a
/// suspended subscriber of the bus while the broker cannot be reached. Its status is the `mqtt`
/// entry of notifybusd's `Sources`: `running` while connected, else `unavailable` with the reason.
///
/// A `NotifyBusSource` like the others: `run()` subscribes and connects on `loop`, and returns
/// when its task is cancelled or graceful shutdown begins, once it has disconnected cleanly:
/// `$online` false (the broker given at most 3 s to take it), then DISCONNECT.
///
/// ```swift
/// let link = MQTTLinkSource(configuration: configuration, bus: bus, loop: loop, logger: logger)
/// try await link.run()   // in a task group or a ServiceGroup, beside the other sources
/// ```
///
/// The link itself (its libmosquitto client, subscription and timers) lives in the loop's storage
/// and runs on the loop thread, sharing it with whatever else the loop serves (notifybusd's D-Bus
/// connection and sources).
public final class MQTTLinkSource: NotifyBusSource {
    /// The name of its source in `Sources`.
    package static let sourceName = "mqtt"
    /// `mqtt`.
    public let name = MQTTLinkSource.sourceName
    /// None: the link reads the bus and publishes nothing into it.
    public let keyPatterns: [KeyPattern] = []
    /// What it publishes and where.
    package let configuration: MQTTLinkConfiguration
    private let bus: NotificationBus
    private let logger: Logger
    private let host: LoopDriverHost<MQTTLink>

    /// A link of `bus` on `loop`; nothing happens before `run()`.
    public init(configuration: MQTTLinkConfiguration, bus: NotificationBus, loop: EventLoopThread, logger: Logger) {
        self.configuration = configuration
        self.bus = bus
        self.logger = logger
        host = LoopDriverHost(name: Self.sourceName, loop: loop)
    }

    /// The status it last reported: `running` while connected.
    public var status: SourceStatus { host.reporter.current }

    /// The current status, then every change, until `run()` returns.
    public func statusUpdates() -> AsyncStream<SourceStatus> { host.reporter.updates() }

    /// Nothing to read again: the link takes every change of the bus from its subscription.
    public func reread() async {}

    /// Subscribes and connects, then publishes until cancelled or graceful shutdown; then
    /// publishes `$online` false, disconnects and lets go of everything before it returns.
    /// - Throws: `SourceError.alreadyRunning` if it runs already; `SourceError.eventLoop` when the
    ///   loop no longer runs.
    public func run() async throws {
        let (configuration, bus, logger, host) = (self.configuration, self.bus, self.logger, self.host)
        try await host.run { context in
            let link = MQTTLink(
                configuration: configuration, bus: bus, context: context, logger: logger,
                report: { status in host.reporter.report(status) },
                onReady: { try? host.loop.execute { context in context[local: host.key]?.deliver() } },
                lookUp: host.key.hostLookup(on: host.loop))
            link.start()
            return link
        } stop: { link, done in
            link.stop(completion: done)
        }
    }

    /// Where the link is now (for tests and diagnostics); `nil` when it does not run.
    public func phase() async -> MQTTLinkState.Phase? {
        await host.read { $0.state.phase }
    }

    /// How many publishes wait for the broker's acknowledgement, and how many messages are owed.
    public func backlog() async -> (inflight: Int, unsent: Int)? {
        await host.read { (inflight: $0.state.inflight.count, unsent: $0.state.unsent.count) }
    }
}
