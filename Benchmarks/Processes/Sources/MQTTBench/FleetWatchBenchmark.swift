import Harness
import EpollLoop
import NotifyBus
import NotifyBusMQTT
import SystemSupport

#if canImport(Glibc)
import Glibc
#endif

/// One side of the fleet benchmark: what it took for `notifywatch --mqtt` to show every (host,
/// key)'s last value.
struct FleetRun {
    /// First change → notifywatch printed the last value of every (host, key); `nil` when not
    /// reached before the timeout.
    var time: Duration?
    /// First change → the broker has acknowledged everything the hosts send (the links: nothing
    /// owed or unacknowledged; the anchor: every event acknowledged); `nil` when not reached.
    var brokerTime: Duration?
    /// First change → the last event handed to the buses (or the publishers).
    var handedOver: Duration
    /// (host, key)s shown at their last value at the end.
    var slotsFinal: Int
    /// The broker's counters over the changes (its own `$SYS` messages excluded).
    var counters: SysCounters
    /// `notification` lines notifywatch printed for the changes.
    var notifications: Int
    /// CPU time over the changes: the hosts (this process, the reading of notifywatch's output
    /// excluded), the broker, notifywatch.
    var cpuHosts: Duration
    var cpuBroker: Duration?
    var cpuWatch: Duration
}

/// The broker's `$SYS` counters (mosquitto 2.0), as a subscriber of `$SYS/broker/#` last saw them
/// (the `Tap`: it takes them at QoS 1 and acknowledges each).
struct SysCounters {
    /// PUBLISH packets sent, and messages dropped (a client's queue full).
    var publishSent = 0, dropped = 0
    /// MQTT packets of every kind received and sent (PUBLISH, PUBACK, PINGREQ, …).
    var packetsReceived = 0, packetsSent = 0
    /// `$SYS` messages the subscriber had received (the broker counts them as sent, and their
    /// PUBACKs as received).
    var ownMessages = 0

    init() {}

    init(_ tap: Tap) {
        func value(_ topic: String) -> Int { tap.latest("$SYS/broker/\(topic)").flatMap { Int($0.payload) } ?? 0 }
        ownMessages = tap.count
        publishSent = value("publish/messages/sent")
        dropped = value("publish/messages/dropped")
        packetsReceived = value("messages/received")
        packetsSent = value("messages/sent")
    }

    /// What happened between `earlier` and `self`, the `$SYS` messages and their PUBACKs taken out.
    func since(_ earlier: SysCounters) -> SysCounters {
        var delta = SysCounters()
        let own = ownMessages - earlier.ownMessages
        delta.publishSent = publishSent - earlier.publishSent - own
        delta.dropped = dropped - earlier.dropped
        delta.packetsReceived = packetsReceived - earlier.packetsReceived - own
        delta.packetsSent = packetsSent - earlier.packetsSent - own
        return delta
    }

    /// PUBLISH packets received (mosquitto 2.0.11's `publish/messages/received` stays 0): every
    /// packet received but the PUBACKs of the QoS 1 messages sent (the watcher's).
    var publishReceived: Int { packetsReceived - publishSent }
}

/// 100 simulated hosts × 10 keys into one broker, each key changing 1,000 times as fast as the
/// hosts take the changes, with `notifywatch --mqtt --json` (the real binary) watching from
/// before: the time until it has shown every (host, key)'s last value, and the broker's
/// messages. The links (a bus and its link per host, 25 to a loop) beside the anchor (a
/// libmosquitto client per host publishing every event, retained at QoS 1), each on a broker of
/// its own. `NOTIFYWATCH` names the binary (default: `.build/release/notifywatch`).
func fleet(hosts: Int = 100, keys: Int = 10, changes: Int = 1000, timeout: Duration = .seconds(90)) async throws {
    let environment = getenv("NOTIFYWATCH").map { String(cString: $0) }
    let watcher = environment ?? ".build/release/notifywatch"
    guard access(watcher, X_OK) == 0 else {
        throw HarnessError("no notifywatch at \(watcher): build it (swift build -c release --product notifywatch) or set NOTIFYWATCH")
    }
    let link = try await fleetRun(link: true, watcher: watcher, hosts: hosts, keys: keys, changes: changes, timeout: timeout)
    let raw = try await fleetRun(link: false, watcher: watcher, hosts: hosts, keys: keys, changes: changes, timeout: timeout)
    let events = grouped(hosts * keys * changes)
    var report = ReportPart("mqtt-fleet")
    report.line("### Fleet: \(hosts) hosts × \(keys) keys × \(grouped(changes)) changes each (\(events) events), `notifywatch --mqtt --json` watching")
    report.line()
    report.line("| | first change → notifywatch shows every (host, key)'s last value | → the broker has acknowledged everything sent | events handed over in | PUBLISH into the broker | PUBLISH to notifywatch | dropped by the broker | MQTT packets in + out | notification lines printed | CPU: hosts / broker / notifywatch |")
    report.line("|---|---|---|---|---|---|---|---|---|---|")
    for (name, run) in [("NotifyBus link (a bus and its link per host)", link), ("a publish per event (anchor: a libmosquitto client per host)", raw)] {
        let time = run.time.map { Figure.seconds($0) } ?? "not reached in \(Figure.seconds(timeout)) (\(run.slotsFinal) of \(hosts * keys) shown at their last value)"
        let counters = run.counters
        let cpu = "\(Figure.seconds(run.cpuHosts)) / \(run.cpuBroker.map { Figure.seconds($0) } ?? "?") / \(Figure.seconds(run.cpuWatch))"
        let brokerTime = run.brokerTime.map { Figure.seconds($0) } ?? "not reached"
        report.line("| \(name) | \(time) | \(brokerTime) | \(Figure.seconds(run.handedOver)) | \(grouped(counters.publishReceived)) | \(grouped(counters.publishSent)) | \(grouped(counters.dropped)) | \(grouped(counters.packetsReceived + counters.packetsSent)) | \(grouped(run.notifications)) | \(cpu) |")
    }
    let timeRatio = link.time.flatMap { l in raw.time.map { ratio(l, $0) } } ?? "–"
    let (l, r) = (link.counters, raw.counters)
    let brokerRatio = link.brokerTime.flatMap { l in raw.brokerTime.map { ratio(l, $0) } } ?? "–"
    report.line("| link / anchor | \(timeRatio) | \(brokerRatio) | | \(ratio(l.publishReceived, r.publishReceived)) | \(ratio(l.publishSent, r.publishSent)) | | \(ratio(l.packetsReceived + l.packetsSent, r.packetsReceived + r.packetsSent)) | \(ratio(link.notifications, raw.notifications)) | \(ratio(link.cpuHosts, raw.cpuHosts)) / \(link.cpuBroker.flatMap { b in raw.cpuBroker.map { ratio(b, $0) } } ?? "?") / \(ratio(link.cpuWatch, raw.cpuWatch)) |")
    try report.finish()
}

/// One side: a broker of its own (`$SYS` every second; by default no limit on the messages
/// queued for a client, so that it drops none of the watcher's; `FLEET_MAX_QUEUED` sets one),
/// the hosts with their current values (0), notifywatch started and showing them, then every key
/// changed `changes` times.
func fleetRun(link: Bool, watcher: String, hosts: Int, keys: Int, changes: Int, timeout: Duration) async throws -> FleetRun {
    let maxQueued = getenv("FLEET_MAX_QUEUED").flatMap { Int(String(cString: $0)) } ?? 0
    let broker = try await MosquittoBroker(quiet: true, settings: ["sys_interval 1", "max_queued_messages \(maxQueued)"])
    let counters = try Tap(broker: broker, name: "sys", filter: "$SYS/broker/#")
    let loops = try (0..<4).map { try EventLoopThread(name: "hosts-\($0)") }
    let keyNames = (0..<keys).map { "k\($0)" }
    let values = (0...changes).map { JSONValue.integer(Int64($0)) }
    var sides: [LinkSide] = []
    var raws: [RawPublisher] = []
    var topics: [[String]] = []
    func payload(_ change: Int, coalesced: Int) -> [UInt8] {
        MQTTPayload(value: values[change], time: WallTime.now().rfc3339, coalesced: coalesced).bytes
    }
    if link {
        for host in 0..<hosts {
            let side = try LinkSide(broker: broker, loop: loops[host % loops.count], hostID: "host-\(host)")
            for key in keyNames { side.bus.publish(key, values[0]) }
            sides.append(side)
        }
        let settled = await waitAsync(timeout: .seconds(60)) {
            for side in sides where await !side.isSettled() { return false }
            return true
        }
        guard settled else { throw HarnessError("the links did not connect") }
    } else {
        for host in 0..<hosts {
            let publisher = try RawPublisher(broker: broker, clientID: "bench-raw-host-\(host)", loop: loops[host % loops.count])
            let hostTopics = keyNames.map { "bench/raw/host-\(host)/\($0)" }
            for topic in hostTopics { publisher.publish(topic, bytes: payload(0, coalesced: 0)) }
            raws.append(publisher)
            topics.append(hostTopics)
        }
        guard wait(timeout: .seconds(60), { raws.allSatisfy { $0.connected.load(ordering: .acquiring) } }) else {
            throw HarnessError("the publishers did not connect")
        }
    }
    let watch = try WatcherProcess(
        executable: watcher, broker: broker, prefix: link ? "bench/link" : "bench/raw", hosts: hosts, keys: keys, finalValue: changes)
    guard wait(timeout: .seconds(30), { watch.progress.allSeen }) else {
        _ = await watch.stop()
        throw HarnessError("notifywatch did not show every current value (see \(broker.directory)/notifywatch.log)")
    }
    // The counters at rest: the broker publishes `$SYS` every second.
    try await Task.sleep(for: .milliseconds(2200))
    let before = SysCounters(counters)
    let notificationsBefore = watch.progress.notifications.load(ordering: .acquiring)
    let readerBefore = await watch.readerCPU()
    let brokerBefore = broker.pid.flatMap { ProcessStats.cpuTime(of: $0) }
    let cpuBefore = processCPU()
    let acknowledgedBefore = raws.reduce(0) { $0 + $1.acknowledged.load(ordering: .relaxed) }

    let start = ContinuousClock.now
    for change in 1...changes {
        for host in 0..<hosts {
            for key in 0..<keys {
                if link {
                    sides[host].bus.publish(keyNames[key], values[change])
                } else {
                    raws[host].publish(topics[host][key], bytes: payload(change, coalesced: 1))
                }
            }
        }
    }
    let handedOver = ContinuousClock.now - start
    var brokerAt: ContinuousClock.Instant?
    while !watch.progress.allFinal || brokerAt == nil, ContinuousClock.now < start + timeout {
        if brokerAt == nil {
            if link {
                var settled = true
                for side in sides where await !side.isSettled() {
                    settled = false
                    break
                }
                if settled { brokerAt = .now }
            } else if raws.reduce(0, { $0 + $1.acknowledged.load(ordering: .relaxed) }) - acknowledgedBefore >= hosts * keys * changes {
                brokerAt = .now
            }
        }
        try await Task.sleep(for: .milliseconds(5))
    }
    let reached = watch.progress.allFinal
    let readerCPU = await watch.readerCPU() - readerBefore
    let cpuHosts = processCPU() - cpuBefore - readerCPU
    let brokerCPU = broker.pid.flatMap { ProcessStats.cpuTime(of: $0) }.flatMap { end in brokerBefore.map { end - $0 } }
    try await Task.sleep(for: .milliseconds(2200))
    let after = SysCounters(counters)
    let notifications = watch.progress.notifications.load(ordering: .acquiring) - notificationsBefore
    let slotsFinal = watch.progress.slotsFinal.load(ordering: .acquiring)
    let finalAt = watch.progress.allFinalAt.withLock { $0 }
    let cpuWatch = await watch.stop()

    for side in sides { await side.stop() }
    for publisher in raws { publisher.shutdown() }
    for loop in loops { await loop.shutdown() }
    counters.shutdown()
    return FleetRun(
        time: reached ? finalAt.map { $0 - start } : nil, brokerTime: brokerAt.map { $0 - start }, handedOver: handedOver, slotsFinal: slotsFinal,
        counters: after.since(before), notifications: notifications,
        cpuHosts: cpuHosts, cpuBroker: brokerCPU, cpuWatch: cpuWatch)
}

/// 1234567 → "1,234,567".
func grouped(_ number: Int) -> String {
    let digits = String(number.magnitude)
    var text = ""
    for (index, digit) in digits.enumerated() {
        if index > 0, (digits.count - index) % 3 == 0 { text += "," }
        text.append(digit)
    }
    return (number < 0 ? "-" : "") + text
}

/// `part / whole` with three decimals ("0.012"), or "–" when `whole` is 0.
func ratio(_ part: Int, _ whole: Int) -> String {
    whole == 0 ? "–" : Figure.decimal(Double(part) / Double(whole), places: 3)
}

func ratio(_ part: Duration, _ whole: Duration) -> String {
    ratio(Int(part / .microseconds(1)), Int(whole / .microseconds(1)))
}
