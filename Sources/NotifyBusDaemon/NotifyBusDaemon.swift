package import DBus
import EpollLoop
package import Logging
package import NotifyBus
package import NotifyBusLifecycle
package import NotifyBusMQTT
import NotifyBusProtocol
package import NotifyBusSources
import ServiceLifecycle
import SourceFramework
import Synchronization

/// `notifybusd` as a library: the sources and one `NotificationBus` behind the
/// `org.notifybus.Bus1` interface on the session bus, as a swift-service-lifecycle `Service`.
///
/// ```swift
/// let daemon = NotifyBusDaemon(configuration: .init())
/// let group = ServiceGroup(configuration: .init(
///     services: [.init(service: daemon)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
/// try await group.run()
/// ```
///
/// `run()` connects, checks that nobody owns `org.notifybus.Bus1`, starts the sources (with the
/// lifecycle and the MQTT link, when configured: sources of the same shape, in the same task
/// group), waits (at most 5 s) until each system source has published its state or found it
/// cannot, then owns the name and serves until graceful shutdown or cancellation; then it
/// cancels every subscription, stops the sources (releasing the sensors they claimed, thawing
/// what the lifecycle froze, the link publishing `$online` false and disconnecting) and closes
/// the connection.
package final class NotifyBusDaemon: Service, Sendable {
    /// What the daemon runs and where.
    package struct Configuration: Sendable {
        /// The session bus it serves on.
        package var sessionBus: DBusAddress
        /// Which sources it runs and where they connect (they run on the daemon's loop, whatever
        /// `loop` says).
        package var sources: SystemSources.Options
        /// The most entries held for all connections' suspended subscriptions together.
        package var maximumHeld: Int
        /// The most subscriptions of all connections together.
        package var maximumSubscriptions: Int
        /// How long to wait for the sources' first statuses before taking the name.
        package var startupTimeout: Duration
        /// Where it logs.
        package var logger: Logger
        /// The MQTT broker it also publishes to (specification: Publishing a fleet to MQTT), if any.
        package var mqtt: MQTTLinkConfiguration?
        /// Background apps frozen and woken (specification: Freezing background apps), if on.
        package var lifecycle: LifecycleConfiguration?

        /// A configuration; by default every source, the standard buses, and the daemon's bounds
        /// (`BusInterface.Limits`).
        package init(
            sessionBus: DBusAddress = .session, sources: SystemSources.Options = SystemSources.Options(),
            maximumHeld: Int = BusInterface.Limits.defaultMaximumHeld,
            maximumSubscriptions: Int = BusInterface.Limits.defaultMaximumSubscriptions,
            startupTimeout: Duration = .seconds(5), logger: Logger = Logger(label: "notifybusd"),
            mqtt: MQTTLinkConfiguration? = nil, lifecycle: LifecycleConfiguration? = nil
        ) {
            self.sessionBus = sessionBus
            self.sources = sources
            self.maximumHeld = maximumHeld
            self.maximumSubscriptions = maximumSubscriptions
            self.startupTimeout = startupTimeout
            self.logger = logger
            self.mqtt = mqtt
            self.lifecycle = lifecycle
        }
    }

    /// Why the daemon could not serve.
    package enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// Another connection owns `org.notifybus.Bus1`.
        case nameTaken
        /// The session bus could not be reached, or went away.
        case bus(String)
        /// The event loop could not start.
        case eventLoop(String)

        /// The failure in words.
        package var description: String {
            switch self {
            case .nameTaken: "\(BusInterface.busName) is already owned on this bus: another notifybusd is running"
            case .bus(let reason): "the session bus: \(reason)"
            case .eventLoop(let reason): "event loop: \(reason)"
            }
        }
    }

    /// What the daemon keeps for its clients at one moment: every count returns to zero when
    /// the clients leave or cancel, whatever they did.
    package struct Census: Sendable, Hashable {
        /// Subscriptions, as objects on the bus.
        package var subscriptions: Int
        /// Connections that own subscriptions or have calls waiting.
        package var owners: Int
        /// Processes' lives followed (one per owner).
        package var followings: Int
        /// Applications with owners.
        package var applications: Int
        /// Calls waiting for their answer.
        package var waitingCalls: Int
        /// Subscribers of the bus.
        package var busSubscribers: Int
        /// Route entries of the bus (a key to a subscriber).
        package var routes: Int
        /// Match rules of the daemon's own connection.
        package var matchRules: Int
    }

    /// Its configuration.
    package let configuration: Configuration
    /// The bus the sources publish into.
    package let bus: NotificationBus
    private let link = Mutex<BusServiceHost?>(nil)

    /// A daemon with `configuration`; nothing runs until `run()`.
    package init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.bus = NotificationBus()
    }

    /// Serves until graceful shutdown or cancellation, then releases everything.
    /// - Throws: `Failure` when it cannot serve: the name is taken, the bus cannot be reached.
    package func run() async throws {
        let loop: EventLoopThread
        do {
            loop = try EventLoopThread(name: "notifybusd")
        } catch {
            throw Failure.eventLoop("\(error)")
        }
        let link = BusServiceHost(loop: loop)
        self.link.withLock { $0 = link }
        defer { self.link.withLock { $0 = nil } }
        do {
            try await serve(link: link)
        } catch {
            await link.close()
            await loop.shutdown()
            throw error
        }
        await link.close()
        await loop.shutdown()
    }

    /// What the daemon keeps for its clients now; `nil` while it does not serve.
    package func census() async -> Census? {
        guard let link = link.withLock({ $0 }) else { return nil }
        return await link.census()
    }

    private func serve(link: BusServiceHost) async throws {
        let configuration = self.configuration
        let bus = self.bus
        var bounds = SubscriptionTable.Bounds()
        bounds.inAll = configuration.maximumSubscriptions
        // Background apps frozen and woken: a source of the bus like the others, on the daemon's
        // loop and connection; its background tasks are an interface of the bus object.
        let lifecycle = configuration.lifecycle.map { lifecycle in
            LifecycleSource(
                configuration: lifecycle, bus: bus, loop: link.loop, logger: configuration.logger,
                connection: { context in context[local: BusService.key]?.connection },
                beforeFrozen: { context in context[local: BusService.key]?.life?.rereadGroups() },
                afterMove: { context in context[local: BusService.key]?.life?.rereadProcessGroups() })
        }
        try await link.connect(address: configuration.sessionBus, maximumReceived: 4 << 20) { [bounds] context, connection in
            BusService(
                connection: connection, bus: bus, loop: link.loop, context: context,
                life: ProcessLifeWatcher(context: context, logger: configuration.logger), bounds: bounds,
                maximumHeld: configuration.maximumHeld, logger: configuration.logger,
                interfaces: lifecycle.map { [$0.busInterface(in: context)] } ?? [])
        }
        if try await link.nameHasOwner(BusInterface.busName) { throw Failure.nameTaken }

        // The sources on the daemon's own loop: a published event reaches the subscriptions'
        // batch handlers, and their `Events` signals leave, on one thread.
        var options = configuration.sources
        options.loop = SourceLoop(thread: link.loop)
        // The link to an MQTT broker: one more source of the loop, whose status is the `mqtt` entry.
        let mqtt = configuration.mqtt.map { mqtt in
            MQTTLinkSource(configuration: mqtt, bus: bus, loop: link.loop, logger: configuration.logger)
        }
        let systemSources = SystemSources.all(bus: bus, options: options)
        let sources: [any NotifyBusSource] = systemSources + (lifecycle.map { [$0] } ?? []) + (mqtt.map { [$0] } ?? [])
        // Each child says whether its end should end the daemon: a source returning does not.
        // However it ends (a shutdown, the name taken, the bus gone), the group cancels its
        // children and waits for them: what the lifecycle froze is thawed, and the MQTT link has
        // published `$online` false and disconnected, before the daemon returns.
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for source in sources {
                group.addTask {
                    do {
                        try await source.run()
                    } catch {
                        await link.setSource(source.name, .failed(reason: "\(error)"))
                    }
                    return false
                }
            }
            // The name is taken once the system sources have said what they have. The lifecycle and
            // the link are not waited for (a compositor or a broker may answer late, or never): each
            // is in `Sources` once it has settled.
            let loop = link.loop
            let statuses = await systemSources.firstStatuses(timeout: configuration.startupTimeout) { await loop.sleep(for: $0) }
            for (source, status) in zip(systemSources, statuses) { await link.setSource(source.name, status) }
            for source in sources {
                group.addTask {
                    for await status in source.statusUpdates() where status.isSettled {
                        await link.setSource(source.name, status)
                    }
                    return false
                }
            }
            switch try await link.requestName(BusInterface.busName) {
            case .primaryOwner, .alreadyOwner: break
            case .exists, .inQueue: throw Failure.nameTaken
            }
            configuration.logger.info("serving \(BusInterface.busName)")
            // Until graceful shutdown, cancellation, or the bus going away.
            group.addTask {
                try? await gracefulShutdown()
                return true
            }
            group.addTask {
                try await link.waitUntilDisconnected()
                return true
            }
            while let stop = try await group.next(), !stop {}
            group.cancelAll()
        }
    }
}
