import EpollLoop
import Logging
import NotifyBus
import NotifyBusMQTT
import NotifyBusSources
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A bus and its MQTT link in this process, on a loop of its own, against `broker`: the link runs
/// (in a task, as in notifybusd's task group) until `shutdown()`, its statuses recorded.
final class LinkBed: Sendable {
    let bus: NotificationBus
    let loop: EventLoopThread
    let link: MQTTLinkSource
    let statuses = Recorder<SourceStatus>()
    /// The link's `run()`, and the recording of its statuses.
    private let running: Task<Void, Never>
    let hostID: String
    let prefix: String
    let configFile: String?

    init(
        broker: any MQTTBroker, bus: NotificationBus = NotificationBus(), hostID: String = "host-1",
        prefix: String = "nb", config: String? = nil, patterns: [KeyPattern] = [.all], url: String? = nil,
        limit: Int = 65_536
    ) throws {
        self.bus = bus
        self.hostID = hostID
        self.prefix = prefix
        loop = try EventLoopThread(name: "mqtt-test")
        var settings = try MQTTBrokerSettings(url: url ?? broker.url)
        if let config {
            let path = "\(broker.directory)/link-\(hostID).conf"
            try writeFile(path, config)
            try settings.readConfig(path: path)
            configFile = path
        } else {
            configFile = nil
        }
        let configuration = try MQTTLinkConfiguration(
            broker: settings, prefix: prefix, hostID: hostID, patterns: patterns, limit: limit)
        var logger = Logger(label: "mqtt-test")
        logger.logLevel = .critical
        let link = MQTTLinkSource(configuration: configuration, bus: bus, loop: loop, logger: logger)
        self.link = link
        // Every status from the first the link reports (the stream begins with `notStarted`).
        let (statuses, updates) = (self.statuses, link.statusUpdates().dropFirst())
        running = Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { for await status in updates { statuses.append(status) } }
                group.addTask { try? await link.run() }
            }
        }
    }

    /// The topic of `key`.
    func topic(_ key: String) -> String { MQTTTopic.topic(prefix: prefix, hostID: hostID, key: key) }

    /// The filter of every topic of this host.
    var everything: String { "\(prefix)/\(hostID)/#" }

    /// Waits until the link reports `running` (after `count` earlier reports of it).
    func waitUntilRunning(times count: Int = 1, timeout: Duration = .seconds(20)) async -> Bool {
        await statuses.wait(timeout: timeout) { $0.filter { $0 == .running }.count >= count }
    }

    /// Waits until the link is connected with nothing owed or unacknowledged.
    func waitUntilSettled(timeout: Duration = .seconds(20)) async -> Bool {
        await eventually(timeout: timeout) {
            guard await link.phase() == .connected, let backlog = await link.backlog() else { return false }
            return backlog.inflight == 0 && backlog.unsent == 0
        }
    }

    /// Stops the link (cancelled: `$online` false, then DISCONNECT) and its loop.
    func shutdown() async {
        running.cancel()
        await running.value
        await loop.shutdown()
    }
}

extension Received {
    /// The payload as the link writes it.
    var decoded: MQTTPayload? { MQTTPayload(bytes: Array(payload.utf8)) }
}

extension Dictionary where Key == String, Value == String {
    /// The payload of `topic`, decoded.
    func payload(_ topic: String) -> MQTTPayload? { self[topic].flatMap { MQTTPayload(bytes: Array($0.utf8)) } }
}
