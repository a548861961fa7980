import Harness
import EpollLoop
import Logging
import NotifyBus
import NotifyBusMQTT
import Synchronization

/// A bus and its MQTT link, as notifybusd runs them, on `loop`: the link runs (in a task, as in
/// notifybusd's task group) until `stop()`.
final class LinkSide: Sendable {
    let bus = NotificationBus()
    let link: MQTTLinkSource
    let running = Atomic<Int>(0)
    let isRunning = Atomic<Bool>(false)
    /// When it last reported `running` (its reconnection).
    let runningSince = Mutex<ContinuousClock.Instant?>(nil)
    /// The link's `run()`, and the reading of its statuses.
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(broker: MosquittoBroker, loop: EventLoopThread, hostID: String, config: String = "") throws {
        var settings = try MQTTBrokerSettings(url: broker.url)
        try settings.readConfig(text: config, path: "bench")
        let configuration = try MQTTLinkConfiguration(broker: settings, prefix: "bench/link", hostID: hostID)
        var logger = Logger(label: "bench")
        logger.logLevel = .critical
        let link = MQTTLinkSource(configuration: configuration, bus: bus, loop: loop, logger: logger)
        self.link = link
        let updates = link.statusUpdates()
        let task = Task { [self] in
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await status in updates {
                        if status == .running {
                            let now = ContinuousClock.now
                            self.runningSince.withLock { $0 = now }
                            _ = self.running.wrappingAdd(1, ordering: .relaxed)
                        }
                        self.isRunning.store(status == .running, ordering: .releasing)
                    }
                }
                group.addTask { try? await link.run() }
            }
        }
        self.task.withLock { $0 = task }
    }

    /// Stops the link (`$online` false, then DISCONNECT) and returns once it has.
    func stop() async {
        guard let task = task.withLock({ $0 }) else { return }
        task.cancel()
        await task.value
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
