import EpollLoop
import Logging
import Mosquitto
import NotifyBus
import SourceFramework
import SystemSupport

/// The MQTT link on the loop: carries out `MQTTLinkState`'s actions with a `MosquittoClient`
/// (a new one per connection attempt), the bus subscription and loop timers.
///
/// Lives on the loop thread only (in the loop's storage, under `MQTTLinkSource`'s key).
final class MQTTLink: BrokerHostResolving, BrokerClientOwner {
    let configuration: MQTTLinkConfiguration
    let bus: NotificationBus
    unowned let context: LoopContext
    let logger: Logger
    /// Makes a status of the link its source's.
    private let report: (SourceStatus) -> Void
    private let onReady: @Sendable () -> Void
    /// Starts looking a host name up; the answer comes back through `resolved(attempt:failure:)`.
    private let lookUp: @Sendable (_ host: String, _ attempt: UInt64) -> Void
    private let random: () -> Double
    /// The wall-clock time of the bus clock's zero, for the payloads' `time`.
    private let origin: WallTime
    private(set) var state = MQTTLinkState()
    var client: MosquittoClient?
    private var subscription: Subscription?
    private var retryTimer: LoopTimer?
    private var stopTimer: LoopTimer?
    private var whenFinished: [() -> Void] = []
    private var queue: [MQTTLinkState.Action] = []
    private var performing = false
    private var refusedKeys: Set<String> = []
    /// The current connection attempt (a lookup's answer for an earlier one is ignored).
    private var attempt: UInt64 = 0
    /// The protocol version of the current attempt.
    private var protocolVersion = MosquittoConfiguration.ProtocolVersion.v5

    /// A link; nothing happens before `start()`. `onReady` must bring the loop to call
    /// `deliver()` (it runs on whatever thread published); `lookUp` must look the host up off the
    /// loop and bring the loop to call `resolved(attempt:failure:)`.
    init(
        configuration: MQTTLinkConfiguration, bus: NotificationBus, context: LoopContext, logger: Logger,
        report: @escaping (SourceStatus) -> Void, onReady: @escaping @Sendable () -> Void,
        lookUp: @escaping @Sendable (_ host: String, _ attempt: UInt64) -> Void,
        random: @escaping () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.configuration = configuration
        self.bus = bus
        self.context = context
        self.logger = logger
        self.report = report
        self.onReady = onReady
        self.lookUp = lookUp
        self.random = random
        self.origin = WallTime.now().advanced(by: .zero - bus.clock.now())
    }

    deinit {
        client?.close()
        subscription?.cancel()
    }

    /// Subscribes (current values first, held until the first connection) and connects.
    func start() {
        let subscription = bus.subscribeForPolling(
            configuration.patterns, policy: .latest, limit: configuration.limit, budget: nil, initial: .current,
            name: nil, onReady: onReady)
        subscription.suspend()
        self.subscription = subscription
        report(.starting(reason: "connecting to \(configuration.broker.url)"))
        run(state.handle(.start))
    }

    /// The bus has events ready: the state decides when to take them.
    func deliver() {
        run(state.handle(.ready))
    }

    /// Stops cleanly (`$online` false, then DISCONNECT; at most 3 s), then calls `completion`.
    func stop(completion: @escaping () -> Void) {
        if state.phase == .stopped {
            completion()
            return
        }
        whenFinished.append(completion)
        run(state.handle(.stop))
        if state.phase == .stopping, stopTimer == nil {
            stopTimer = context.scheduleTimer(after: .seconds(3)) { [weak self] in
                guard let self else { return }
                self.run(self.state.handle(.stopTimedOut))
            }
        }
    }

    // MARK: Carrying out the actions

    private func run(_ actions: [MQTTLinkState.Action]) {
        queue += actions
        guard !performing else { return }
        performing = true
        defer { performing = false }
        while !queue.isEmpty { perform(queue.removeFirst()) }
    }

    private func perform(_ action: MQTTLinkState.Action) {
        switch action {
        case .connect(let version): connect(version)
        case .publishOnline(let online): publishOnline(online)
        case .publish(let message): publish(message)
        case .poll:
            guard let subscription else { return }
            run(state.handle(.notifications(subscription.poll())))
        case .suspend: subscription?.suspend()
        case .resume(let resync):
            guard let subscription else { return }
            subscription.resume()
            if resync {
                logger.info("the MQTT broker kept no session: publishing every value again")
                subscription.resync()
            }
            run(state.handle(.notifications(subscription.poll())))
        case .scheduleRetry(let delay):
            if let retryTimer { context.cancelTimer(retryTimer) }
            logger.info("reconnecting to the MQTT broker in \(delay)")
            retryTimer = context.scheduleTimer(after: delay) { [weak self] in
                guard let self else { return }
                self.retryTimer = nil
                self.run(self.state.handle(.retryDue))
            }
        case .status(let status):
            switch status {
            case .running: logger.notice("connected to the MQTT broker \(configuration.broker.url)")
            default: logger.warning("MQTT link \(status.name): \(status.reason ?? "")")
            }
            report(status)
        case .disconnect: client?.disconnect()
        case .closeClient:
            client?.close()
            client = nil
        case .finished: finish()
        }
    }

    /// Starts an attempt: a host name is looked up first, off the loop.
    private func connect(_ version: MosquittoConfiguration.ProtocolVersion) {
        attempt &+= 1
        protocolVersion = version
        let host = configuration.broker.host
        if HostLookup.isNumeric(host) {
            openConnection()
        } else {
            lookUp(host, attempt)
        }
    }

    /// The answer of the lookup of attempt `attempt`: `nil` when the name resolves.
    func resolved(attempt: UInt64, failure: HostLookup.Failure?) {
        guard attempt == self.attempt, state.phase == .connecting, client == nil else { return }
        if let failure {
            lost("\(configuration.broker.url): \(configuration.broker.reason(failure))")
        } else {
            openConnection()
        }
    }

    /// Connects once the name resolves (libmosquitto resolves it again, and tries each of its
    /// addresses).
    private func openConnection() {
        openClient(configuration.mosquittoConfiguration(protocolVersion), url: configuration.broker.url)
    }

    func handle(_ event: MosquittoClient.Event) {
        switch event {
        case .connected(let sessionPresent):
            run(state.handle(.connected(sessionPresent: sessionPresent)))
        case .refused(let reason, let unsupportedVersion):
            let reason = "\(configuration.broker.url) refused the connection: \(reason)"
            if unsupportedVersion {
                if let older = protocolVersion.older {
                    logger.notice("\(reason): connecting with MQTT \(older.rawValue)")
                }
                run(state.handle(.versionRefused(reason: reason, random: random())))
            } else {
                lost(reason)
            }
        case .disconnected(let reason):
            lost("\(configuration.broker.url): \(reason ?? "disconnected")")
        case .acknowledged(let messageID, let reasonCode):
            if reasonCode >= 128 {
                logger.warning("the MQTT broker refused publish \(messageID) (reason code \(reasonCode))")
            }
            run(state.handle(.acknowledged(messageID: messageID)))
        case .message:
            break
        }
    }

    func lost(_ reason: String) {
        run(state.handle(.connectionLost(reason: reason, random: random())))
    }

    private func publishOnline(_ online: Bool) {
        guard let client else {
            if !online { run(state.handle(.stopTimedOut)) }
            return
        }
        do {
            let messageID = try client.publish(
                topic: configuration.onlineTopic, payload: Array((online ? "true" : "false").utf8), qos: 1, retain: true)
            if !online { state.offlineSent(messageID: messageID) }
        } catch {
            logger.warning("cannot publish \(configuration.onlineTopic): \(error)")
            if !online { run(state.handle(.stopTimedOut)) }
        }
    }

    private func publish(_ message: MQTTLinkState.Message) {
        // The availability topic is the link's own: a key of that name is not published.
        if message.key == MQTTTopic.onlineLevel {
            if refusedKeys.insert(message.key).inserted {
                logger.warning("not publishing key \(message.key): its topic is the host's availability topic")
            }
            run(state.handle(.dropped(message)))
            return
        }
        guard let client else {
            run(state.handle(.notSent(message)))
            return
        }
        let payload = MQTTPayload(
            value: message.value, time: origin.advanced(by: message.time).rfc3339, coalesced: message.coalesced)
        do {
            let messageID = try client.publish(
                topic: configuration.topic(for: message.key), payload: payload.bytes, qos: 1, retain: true)
            run(state.handle(.sent(message, messageID: messageID)))
        } catch {
            if error.isAboutTheRequest {
                // The message itself cannot be published (a topic that is not valid UTF-8, a
                // payload too large): it would fail again. Say so once per key.
                if refusedKeys.insert(message.key).inserted {
                    logger.warning("cannot publish key \(message.key) to MQTT: \(error)")
                }
                run(state.handle(.dropped(message)))
            } else {
                // The connection failed under the publish (whether or not libmosquitto has said
                // so yet): the message is owed, and the connection is over.
                run(state.handle(.notSent(message)))
                lost("\(configuration.broker.url): \(error.reason)")
            }
        }
    }

    private func finish() {
        if let retryTimer { context.cancelTimer(retryTimer) }
        if let stopTimer { context.cancelTimer(stopTimer) }
        retryTimer = nil
        stopTimer = nil
        subscription?.cancel()
        subscription = nil
        let callbacks = whenFinished
        whenFinished = []
        for callback in callbacks { callback() }
    }
}
