import Harness
import EpollLoop
import Logging
import NotifyBus
import NotifyBusMQTT
import Synchronization

/// A bus and its MQTT link, as notifybusd runs them, on `loop`.
final class LinkSide: Sendable {
    let bus = NotificationBus()
    let link: MQTTLinkService
    let running = Atomic<Int>(0)
    let isRunning = Atomic<Bool>(false)
    /// When it last reported `running` (its reconnection).
    let runningSince = Mutex<ContinuousClock.Instant?>(nil)

    init(broker: MosquittoBroker, loop: EventLoopThread, hostID: String, config: String = "") throws {
        var settings = try MQTTBrokerSettings(url: broker.url)
        try settings.readConfig(text: config, path: "bench")
        let configuration = try MQTTLinkConfiguration(broker: settings, prefix: "bench/link", hostID: hostID)
        var logger = Logger(label: "bench")
        logger.logLevel = .critical
        link = MQTTLinkService(configuration: configuration, bus: bus, loop: loop, logger: logger)
        try link.start { [self] _, status in
            if status == .running {
                let now = ContinuousClock.now
                self.runningSince.withLock { $0 = now }
                _ = self.running.wrappingAdd(1, ordering: .relaxed)
            }
            self.isRunning.store(status == .running, ordering: .releasing)
        }
    }

    /// Whether it is connected with nothing owed or unacknowledged.
    func isSettled() async -> Bool {
        guard await link.phase() == .connected, let backlog = await link.backlog() else { return false }
        return backlog.inflight == 0 && backlog.unsent == 0
    }
}

/// Waits (polling every millisecond) until `condition` holds; returns whether it did in time.
func waitAsync(timeout: Duration, _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while await !condition() {
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}

/// The integer after `"value":` in a payload, if any.
func integerValue(_ payload: String) -> Int? {
    guard let range = payload.firstRange(of: "\"value\":") else { return nil }
    return Int(payload[range.upperBound...].prefix { $0.isNumber || $0 == "-" })
}

/// The count after `"coalesced":` in a payload, if any.
func coalescedCount(_ payload: String) -> Int? {
    guard let range = payload.firstRange(of: "\"coalesced\":") else { return nil }
    return Int(payload[range.upperBound...].prefix { $0.isNumber })
}
