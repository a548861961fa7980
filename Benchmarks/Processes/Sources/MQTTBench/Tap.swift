import Harness
import EpollLoop
import Mosquitto
import Synchronization

/// A subscriber to `bench/#` (or `filter`) with a persistent session (the broker queues what it misses while
/// away), reconnecting 50 ms after losing the broker; it records every message with the time it
/// arrived.
final class Tap: Sendable {
    struct Received: Sendable {
        var topic: String
        var payload: String
        var retained: Bool
        var time: ContinuousClock.Instant
    }

    let loop: EventLoopThread
    let received = Mutex<[Received]>([])
    let connected = Atomic<Bool>(false)
    private let key = LoopLocalKey<TapConnection>()

    init(broker: MosquittoBroker, name: String, filter: String = "bench/#") throws {
        loop = try EventLoopThread(name: "tap")
        let configuration = MosquittoConfiguration(
            host: "127.0.0.1", port: broker.port, clientID: "bench-tap-\(name)", keepalive: 60, cleanSession: false)
        let key = self.key
        try loop.execute { [self] context in
            let connection = TapConnection(configuration: configuration, filter: filter, context: context, tap: self)
            context[local: key] = connection
            connection.connect()
        }
        guard wait(timeout: .seconds(10), { self.connected.load(ordering: .acquiring) }) else {
            throw HarnessError("the tap did not connect")
        }
    }

    func shutdown() {
        loop.syncShutdown()
    }

    /// Messages received since `start` (an index into `received`).
    func messages(from start: Int) -> [Received] {
        received.withLock { Array($0[min(start, $0.count)...]) }
    }

    var count: Int { received.withLock { $0.count } }

    /// The latest message on `topic`, if any.
    func latest(_ topic: String) -> Received? {
        received.withLock { $0.last { $0.topic == topic } }
    }
}

final class TapConnection {
    let configuration: MosquittoConfiguration
    let filter: String
    unowned let context: LoopContext
    let tap: Tap
    var client: MosquittoClient?

    init(configuration: MosquittoConfiguration, filter: String, context: LoopContext, tap: Tap) {
        self.configuration = configuration
        self.filter = filter
        self.context = context
        self.tap = tap
    }

    func connect() {
        do {
            let client = try MosquittoClient(configuration: configuration, context: context) { [weak self] event in
                self?.handle(event)
            }
            self.client = client
            try client.connect()
        } catch {
            retry()
        }
    }

    func handle(_ event: MosquittoClient.Event) {
        switch event {
        case .connected:
            try? client?.subscribe(filter, qos: 1)
            tap.connected.store(true, ordering: .releasing)
        case .message(let message):
            let now = ContinuousClock.now
            tap.received.withLock {
                $0.append(Tap.Received(
                    topic: message.topic, payload: String(decoding: message.payload, as: UTF8.self),
                    retained: message.retained, time: now))
            }
        case .disconnected, .refused:
            tap.connected.store(false, ordering: .releasing)
            retry()
        case .acknowledged:
            break
        }
    }

    func retry() {
        client?.close()
        client = nil
        context.scheduleTimer(after: .milliseconds(50)) { [weak self] in self?.connect() }
    }
}

/// The anchor: a plain libmosquitto client that publishes every event (retained, QoS 1), as
/// `mosquitto_pub` per event would, and while the broker is away keeps every event for later, as
/// libmosquitto's own queue of QoS 1 messages does; it reconnects after 1 s (libmosquitto's
/// default delay). On a loop of its own, or on `loop` (shared with other publishers).
final class RawPublisher: Sendable {
    let loop: EventLoopThread
    private let ownsLoop: Bool
    let connected = Atomic<Bool>(false)
    let connections = Atomic<Int>(0)
    /// Publishes the broker acknowledged (PUBACK).
    let acknowledged = Atomic<Int>(0)
    /// When it last connected.
    let connectedSince = Mutex<ContinuousClock.Instant?>(nil)
    private let key = LoopLocalKey<RawConnection>()

    init(broker: MosquittoBroker, clientID: String = "bench-raw", loop: EventLoopThread? = nil) throws {
        ownsLoop = loop == nil
        self.loop = try loop ?? EventLoopThread(name: "raw")
        let configuration = MosquittoConfiguration(
            host: "127.0.0.1", port: broker.port, clientID: clientID, keepalive: 60, cleanSession: false)
        let key = self.key
        try self.loop.execute { [self] context in
            let connection = RawConnection(configuration: configuration, context: context, publisher: self)
            context[local: key] = connection
            connection.connect()
        }
    }

    /// Publishes `payload` to `topic` now, or when connected again.
    func publish(_ topic: String, _ payload: String) {
        publish(topic, bytes: Array(payload.utf8))
    }

    func publish(_ topic: String, bytes: [UInt8]) {
        let key = self.key
        try? loop.execute { context in context[local: key]?.publish(topic, bytes) }
    }

    /// Ends its loop, or (on a shared loop) closes its connection.
    func shutdown() {
        if ownsLoop {
            loop.syncShutdown()
        } else {
            let key = self.key
            try? loop.execute { context in
                context[local: key]?.close()
                context[local: key] = nil
            }
        }
    }
}

final class RawConnection {
    let configuration: MosquittoConfiguration
    unowned let context: LoopContext
    let publisher: RawPublisher
    var client: MosquittoClient?
    var queued: [(String, [UInt8])] = []

    init(configuration: MosquittoConfiguration, context: LoopContext, publisher: RawPublisher) {
        self.configuration = configuration
        self.context = context
        self.publisher = publisher
    }

    func connect() {
        do {
            let client = try MosquittoClient(configuration: configuration, context: context) { [weak self] event in
                self?.handle(event)
            }
            self.client = client
            try client.connect()
        } catch {
            retry()
        }
    }

    func publish(_ topic: String, _ payload: [UInt8]) {
        guard let client, client.isConnected else {
            queued.append((topic, payload))
            return
        }
        _ = try? client.publish(topic: topic, payload: payload, qos: 1, retain: true)
    }

    func handle(_ event: MosquittoClient.Event) {
        switch event {
        case .connected:
            let now = ContinuousClock.now
            publisher.connectedSince.withLock { $0 = now }
            publisher.connected.store(true, ordering: .releasing)
            _ = publisher.connections.wrappingAdd(1, ordering: .relaxed)
            let backlog = queued
            queued = []
            for (topic, payload) in backlog { publish(topic, payload) }
        case .disconnected, .refused:
            publisher.connected.store(false, ordering: .releasing)
            retry()
        case .acknowledged:
            _ = publisher.acknowledged.wrappingAdd(1, ordering: .relaxed)
        case .message:
            break
        }
    }

    func retry() {
        client?.close()
        client = nil
        context.scheduleTimer(after: .seconds(1)) { [weak self] in self?.connect() }
    }

    func close() {
        client?.close()
        client = nil
        queued = []
    }
}
