package import EpollLoop
import Mosquitto
import SystemSupport

/// A fleet watched through an MQTT broker (specification: Publishing a fleet to MQTT): subscribes to the topics of the
/// selected hosts and keys and reports each message as a `FleetEvent` (the retained ones first:
/// every host's current values), and the hosts' availability. Reconnects after 1 s doubling to
/// 60 s (±20 %), subscribing again; a reconnection's retained messages that repeat what was
/// received are skipped.
///
/// The handle is `Sendable`; the connection lives on `loop`, and `onEvent` runs there.
package final class MQTTFleetWatcher: Sendable {
    /// The broker.
    package let broker: MQTTBrokerSettings
    /// The first topic levels.
    package let prefix: String
    /// The hosts and keys watched.
    package let selections: [FleetSelection]
    private let loop: EventLoopThread
    private let key = LoopLocalKey<FleetConnection>()

    /// A watcher; nothing happens before `start`.
    package init(broker: MQTTBrokerSettings, prefix: String, selections: [FleetSelection], loop: EventLoopThread) {
        self.broker = broker
        self.prefix = prefix
        self.selections = selections.isEmpty ? [.everything] : selections
        self.loop = loop
    }

    /// Connects and subscribes; `onEvent` is told what arrives, on the loop thread.
    package func start(onEvent: @escaping @Sendable (FleetEvent) -> Void) throws(EventLoopError) {
        let key = self.key
        let broker = self.broker
        let reader = FleetReader(prefix: prefix, selections: selections)
        let loop = self.loop
        try loop.execute { context in
            guard context[local: key] == nil else { return }
            let connection = FleetConnection(
                broker: broker, reader: reader, context: context, onEvent: onEvent, lookUp: key.hostLookup(on: loop))
            context[local: key] = connection
            connection.connect()
        }
    }

    /// Disconnects and releases the connection.
    package func stop() async {
        await key.release(on: loop) { $0.close() }
    }
}

/// The watcher's connection on the loop: one `MosquittoClient` per attempt.
final class FleetConnection: BrokerHostResolving, BrokerClientOwner {
    private let broker: MQTTBrokerSettings
    private var reader: FleetReader
    unowned let context: LoopContext
    private let onEvent: @Sendable (FleetEvent) -> Void
    var client: MosquittoClient?
    private var retryTimer: LoopTimer?
    private var failures = 0
    private var lastStatus: FleetEvent?
    private var closed = false
    /// MQTT 5 until the broker refuses it, then 3.1.1.
    private var protocolVersion = MosquittoConfiguration.ProtocolVersion.v5
    /// A client id of its own: watchers must not take each other's (or a link's) session.
    private let clientID: String
    /// Looks a host name up off the loop (which also carries the signals); the answer comes back
    /// through `resolved(attempt:failure:)`.
    private let lookUp: @Sendable (_ host: String, _ attempt: UInt64) -> Void
    private var attempt: UInt64 = 0

    init(
        broker: MQTTBrokerSettings, reader: FleetReader, context: LoopContext, onEvent: @escaping @Sendable (FleetEvent) -> Void,
        lookUp: @escaping @Sendable (_ host: String, _ attempt: UInt64) -> Void
    ) {
        self.broker = broker
        self.reader = reader
        self.context = context
        self.onEvent = onEvent
        self.lookUp = lookUp
        let random = UInt32.random(in: 0...UInt32.max)
        clientID = broker.clientID ?? "notifywatch-\(HostName.current)-\(String(random, radix: 36))"
    }

    /// Starts an attempt: a host name is looked up first, off the loop.
    func connect() {
        guard !closed else { return }
        attempt &+= 1
        if HostLookup.isNumeric(broker.host) {
            open()
        } else {
            lookUp(broker.host, attempt)
        }
    }

    /// The answer of the lookup of attempt `attempt`.
    func resolved(attempt: UInt64, failure: HostLookup.Failure?) {
        guard attempt == self.attempt, !closed, client == nil, retryTimer == nil else { return }
        if let failure {
            lost("\(broker.url): \(broker.reason(failure))")
        } else {
            open()
        }
    }

    /// Connects to the broker once its name resolves (libmosquitto resolves it again, and tries
    /// each of its addresses).
    private func open() {
        var configuration = broker.mosquittoConfiguration(
            clientID: clientID, cleanSession: true, will: nil, protocolVersion: protocolVersion)
        // Whoever publishes under the prefix: an MQTT 5 broker sends nothing larger than this.
        configuration.maximumPacketSize = FleetReader.maximumMessageBytes + 65_536
        openClient(configuration, url: broker.url)
    }

    func handle(_ event: MosquittoClient.Event) {
        switch event {
        case .connected:
            failures = 0
            report(.broker(status: "running", reason: nil))
            for filter in reader.filters {
                do {
                    try client?.subscribe(filter, qos: 1)
                } catch {
                    report(.broker(status: "failed", reason: "cannot subscribe to \(filter): \(error.reason)"))
                }
            }
        case .refused(let reason, let unsupportedVersion):
            if unsupportedVersion, let older = protocolVersion.older {
                // A broker that speaks only MQTT 3.1.1: ask again in its version, at once.
                protocolVersion = older
                client?.close()
                client = nil
                connect()
            } else {
                lost("\(broker.url) refused the connection: \(reason)")
            }
        case .disconnected(let reason):
            lost("\(broker.url): \(reason ?? "disconnected")")
        case .message(let message):
            if let event = reader.read(message) { onEvent(event) }
        case .acknowledged:
            break
        }
    }

    func lost(_ reason: String) {
        client?.close()
        client = nil
        guard !closed else { return }
        failures += 1
        report(.broker(status: "unavailable", reason: reason))
        let delay = MQTTLinkState.delay(afterFailures: failures, random: Double.random(in: 0..<1))
        retryTimer = context.scheduleTimer(after: delay) { [weak self] in
            self?.retryTimer = nil
            self?.connect()
        }
    }

    /// Reports a broker status that differs from the last one reported.
    private func report(_ status: FleetEvent) {
        guard status != lastStatus else { return }
        lastStatus = status
        onEvent(status)
    }

    func close() {
        closed = true
        if let retryTimer { context.cancelTimer(retryTimer) }
        retryTimer = nil
        client?.disconnect()
        client?.close()
        client = nil
    }
}
