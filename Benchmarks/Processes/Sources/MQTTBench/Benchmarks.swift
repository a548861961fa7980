import Harness
import EpollLoop
import Synchronization
import NotifyBus
import NotifyBusMQTT

#if canImport(Glibc)
import Glibc
#endif

/// 10 keys × 1,000 changes while the broker is down: what each side sends after the broker comes
/// back, and how long from its reconnection until the broker holds every current value.
func outage(keys: Int = 10, changes: Int = 1000) async throws {
    let broker = try await MosquittoBroker(quiet: true, settings: ["max_queued_messages 100000"])
    let tap = try Tap(broker: broker, name: "outage")
    let loop = try EventLoopThread(name: "link")
    let link = try LinkSide(broker: broker, loop: loop, hostID: "h")
    let raw = try RawPublisher(broker: broker)
    for key in 0..<keys {
        link.bus.publish("k\(key)", 0)
        raw.publish("bench/raw/h/k\(key)", #"{"value":0}"#)
    }
    guard await waitAsync(timeout: .seconds(20), { await link.isSettled() && raw.connected.load(ordering: .acquiring) }) else {
        throw HarnessError("the publishers did not connect")
    }
    try await Task.sleep(for: .milliseconds(300))
    broker.stop()
    guard wait(timeout: .seconds(20), {
        !link.isRunning.load(ordering: .acquiring) && !raw.connected.load(ordering: .acquiring)
            && !tap.connected.load(ordering: .acquiring)
    }) else { throw HarnessError("the clients did not notice the outage") }
    for change in 1...changes {
        for key in 0..<keys {
            link.bus.publish("k\(key)", .integer(Int64(change)))
            raw.publish("bench/raw/h/k\(key)", #"{"value":\#(change)}"#)
        }
    }
    let mark = tap.count
    try await broker.start()
    _ = wait(timeout: .seconds(30)) { link.isRunning.load(ordering: .acquiring) && raw.connected.load(ordering: .acquiring) }
    let linkBack = link.runningSince.withLock { $0 }
    let rawBack = raw.connectedSince.withLock { $0 }
    func current(_ side: String) -> ContinuousClock.Instant? {
        var latest: [String: Tap.Received] = [:]
        for message in tap.messages(from: mark) where message.topic.hasPrefix("bench/\(side)/h/k") {
            latest[message.topic] = message
        }
        guard latest.count == keys, latest.values.allSatisfy({ integerValue($0.payload) == changes }) else { return nil }
        return latest.values.map(\.time).max()
    }
    _ = wait(timeout: .seconds(60)) { current("link") != nil && current("raw") != nil }
    try await Task.sleep(for: .seconds(1))
    let after = tap.messages(from: mark)
    let linkMessages = after.filter { $0.topic.hasPrefix("bench/link/h/k") && !$0.retained }
    let rawMessages = after.filter { $0.topic.hasPrefix("bench/raw/h/k") && !$0.retained }
    let counts = linkMessages.compactMap { coalescedCount($0.payload) }
    var report = ReportPart("mqtt-outage")
    report.line("### Outage: \(keys) keys × \(changes) changes while the broker is down")
    report.line()
    report.line("| | messages after reconnection | reconnection → every retained value current |")
    report.line("|---|---|---|")
    let linkTime = current("link").flatMap { end in linkBack.map { quantile([end - $0], 0) } } ?? "not reached"
    let rawTime = current("raw").flatMap { end in rawBack.map { quantile([end - $0], 0) } } ?? "not reached"
    report.line("| NotifyBus link | \(linkMessages.count) (coalesced \(counts.map(String.init).joined(separator: ", "))) | \(linkTime) |")
    report.line("| a publish per event (anchor) | \(rawMessages.count) | \(rawTime) |")
    try report.finish()
    raw.shutdown()
    await link.stop()
    await loop.shutdown()
    tap.shutdown()
}

/// One change → a subscriber of the broker: through the link vs a publish per event.
func latency(events: Int = 1000) async throws {
    let broker = try await MosquittoBroker(quiet: true, settings: ["max_queued_messages 100000"])
    let tap = try Tap(broker: broker, name: "latency")
    let loop = try EventLoopThread(name: "link")
    let link = try LinkSide(broker: broker, loop: loop, hostID: "h")
    let raw = try RawPublisher(broker: broker)
    guard await waitAsync(timeout: .seconds(20), { await link.isSettled() && raw.connected.load(ordering: .acquiring) }) else {
        throw HarnessError("the publishers did not connect")
    }
    var results: [(String, [Duration])] = []
    // A warm-up round on each side first (its first publishes fault pages in and grow buffers),
    // then the measured rounds.
    for (round, side) in [(0, "link"), (0, "raw"), (1, "link"), (1, "raw")] {
        let mark = tap.count
        var sent: [ContinuousClock.Instant] = []
        for event in 0..<events {
            sent.append(.now)
            if side == "link" {
                link.bus.publish("lat", .integer(Int64(event)))
            } else {
                raw.publish("bench/raw/h/lat", #"{"value":\#(event)}"#)
            }
            usleep(2_000)
        }
        _ = wait(timeout: .seconds(10)) {
            tap.messages(from: mark).contains { $0.topic == "bench/\(side)/h/lat" && integerValue($0.payload) == events - 1 }
        }
        let latencies = tap.messages(from: mark).compactMap { message -> Duration? in
            guard message.topic == "bench/\(side)/h/lat", let event = integerValue(message.payload), event < sent.count else { return nil }
            return message.time - sent[event]
        }
        if round == 1 { results.append((side, latencies)) }
    }
    var report = ReportPart("mqtt-latency")
    report.line("### Live latency: a change → a subscriber of the broker (\(events) changes, 2 ms apart)")
    report.line()
    report.line("| | received | p50 | p99 |")
    report.line("|---|---|---|---|")
    for (side, latencies) in results {
        let name = side == "link" ? "NotifyBus link (bus.publish → subscriber)" : "a publish per event (anchor)"
        report.line("| \(name) | \(latencies.count) | \(quantile(latencies, 0.5)) | \(quantile(latencies, 0.99)) |")
    }
    try report.finish()
    raw.shutdown()
    await link.stop()
    await loop.shutdown()
    tap.shutdown()
}
