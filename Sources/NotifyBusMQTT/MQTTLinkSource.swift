public import EpollLoop
public import Logging
public import NotifyBus
import OrderedCollections
public import SourceFramework
import SystemSupport

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
    /// The bus it publishes.
    package let bus: NotificationBus
    /// The loop it runs on.
    package let loop: EventLoopThread
    /// Where it logs.
    package let logger: Logger
    private let reporter = SourceStatusReporter()
    private let key = LoopLocalKey<MQTTLink>()

    /// A link of `bus` on `loop`; nothing happens before `run()`.
    public init(configuration: MQTTLinkConfiguration, bus: NotificationBus, loop: EventLoopThread, logger: Logger) {
        self.configuration = configuration
        self.bus = bus
        self.loop = loop
        self.logger = logger
    }

    /// The status it last reported: `running` while connected.
    public var status: SourceStatus { reporter.current }

    /// The current status, then every change, until `run()` returns.
    public func statusUpdates() -> AsyncStream<SourceStatus> { reporter.updates() }

    /// Nothing to read again: the link takes every change of the bus from its subscription.
    public func reread() async {}

    /// Subscribes and connects, then publishes until cancelled or graceful shutdown; then
    /// publishes `$online` false, disconnects and lets go of everything before it returns.
    /// - Throws: `SourceError.alreadyRunning` if it runs already; `SourceError.eventLoop` when the
    ///   loop no longer runs.
    public func run() async throws {
        let (key, reporter, configuration, bus, logger, loop) = (self.key, self.reporter, self.configuration, self.bus, self.logger, self.loop)
        let ran: Bool
        do {
            ran = try await key.runUntilCancelled(on: loop) { context in
                let link = MQTTLink(
                    configuration: configuration, bus: bus, context: context, logger: logger,
                    onStatus: { status in reporter.report(status) },
                    onReady: { try? loop.execute { context in context[local: key]?.deliver() } },
                    lookUp: key.hostLookup(on: loop))
                link.start()
                return link
            } stop: { link, _, done in
                link.stop(completion: done)
            }
        } catch {
            reporter.report(.failed(reason: "event loop: \(error)"))
            reporter.finish()
            throw SourceError.eventLoop(source: name, reason: "\(error)")
        }
        guard ran else { throw SourceError.alreadyRunning(source: name) }
        reporter.finish()
    }

    /// Where the link is now (for tests and diagnostics); `nil` when it does not run.
    public func phase() async -> MQTTLinkState.Phase? {
        await read { $0.state.phase }
    }

    /// How many publishes wait for the broker's acknowledgement, and how many messages are owed.
    public func backlog() async -> (inflight: Int, unsent: Int)? {
        await read { (inflight: $0.state.inflight.count, unsent: $0.state.unsent.count) }
    }

    /// What `read` says of the running link, on the loop thread.
    private func read<Value: Sendable>(_ read: @escaping @Sendable (MQTTLink) -> Value) async -> Value? {
        let key = self.key
        return try? await loop.submit { context in context[local: key].map(read) } ?? nil
    }
}
