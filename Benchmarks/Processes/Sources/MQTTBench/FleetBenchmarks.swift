import Harness
import EpollLoop
import NotifyBus
import NotifyBusMQTT

#if canImport(Glibc)
import Glibc
#endif

/// CPU time of this process so far (user and system), from getrusage.
func processCPU() -> Duration {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let micros = (Int64(usage.ru_utime.tv_sec) + Int64(usage.ru_stime.tv_sec)) * 1_000_000
        + Int64(usage.ru_utime.tv_usec) + Int64(usage.ru_stime.tv_usec)
    return .microseconds(micros)
}

/// 100 simulated hosts, each a bus of 10 keys and its link, 25 to a loop: how long until the
/// broker holds every host's values, and how long after a broker restart until every link is
/// connected and has sent what it owes (after one change per key meanwhile).
func hosts(count: Int = 100, keys: Int = 10) async throws {
    let broker = try await MosquittoBroker(quiet: true, settings: ["max_queued_messages 100000"])
    let tap = try Tap(broker: broker, name: "hosts")
    let loops = try (0..<4).map { try EventLoopThread(name: "links-\($0)") }
    let cpuAtStart = processCPU()
    let start = ContinuousClock.now
    var sides: [LinkSide] = []
    for host in 0..<count {
        let side = try LinkSide(broker: broker, loop: loops[host % loops.count], hostID: "host-\(host)")
        for key in 0..<keys { side.bus.publish("k\(key)", .integer(Int64(key))) }
        sides.append(side)
    }
    func allSettled() async -> Bool {
        for side in sides where await !side.isSettled() { return false }
        return true
    }
    let firstOK = await waitAsync(timeout: .seconds(60)) { await allSettled() }
    let first = ContinuousClock.now - start
    let firstCPU = processCPU() - cpuAtStart
    _ = wait(timeout: .seconds(20)) {
        Set(tap.messages(from: 0).filter { $0.topic.hasPrefix("bench/link/") }.map(\.topic)).count >= count * (keys + 1)
    }
    let held = Set(tap.messages(from: 0).filter { $0.topic.hasPrefix("bench/link/") }.map(\.topic)).count

    broker.stop()
    _ = wait(timeout: .seconds(20)) { sides.allSatisfy { !$0.isRunning.load(ordering: .acquiring) } }
    for side in sides { side.bus.publish("k0", 1000) }
    let cpuBeforeRestart = processCPU()
    try await broker.start()
    let restart = ContinuousClock.now
    let againOK = await waitAsync(timeout: .seconds(60)) { await allSettled() }
    let again = ContinuousClock.now - restart
    let againCPU = processCPU() - cpuBeforeRestart

    var report = ReportPart("mqtt-hosts")
    report.line("### \(count) simulated hosts × \(keys) keys, one broker")
    report.line()
    report.line("| | time | CPU of this process (the links and a subscriber) |")
    report.line("|---|---|---|")
    report.line("| start → every host connected and its values acknowledged (\(held) topics held) | \(firstOK ? Figure.seconds(first) : "not reached") | \(Figure.seconds(firstCPU)) |")
    report.line("| broker restart → every host reconnected, its changed key sent and acknowledged | \(againOK ? Figure.seconds(again) : "not reached") | \(Figure.seconds(againCPU)) |")
    try report.finish()
    for side in sides { await side.stop() }
    for loop in loops { await loop.shutdown() }
    tap.shutdown()
}

/// A connected link with nothing to send: the wake-ups of its loop thread over `duration`, with a
/// keepalive of `keepalive` seconds.
func idle(duration: Duration = .seconds(33), keepalive: Int = 10) async throws {
    let broker = try await MosquittoBroker(quiet: true, settings: ["max_queued_messages 100000"])
    let loop = try EventLoopThread(name: "mqtt-idle")
    let link = try LinkSide(broker: broker, loop: loop, hostID: "idle", config: "keepalive = \(keepalive)\n")
    link.bus.publish("k", 1)
    guard await waitAsync(timeout: .seconds(20), { await link.isSettled() }) else { throw HarnessError("the link did not connect") }
    try await Task.sleep(for: .milliseconds(200))
    let before = switches(ofThreadNamed: "mqtt-idle")
    try await Task.sleep(for: duration)
    let after = switches(ofThreadNamed: "mqtt-idle")
    var report = ReportPart("mqtt-idle")
    report.line("### Idle: a connected link with nothing to send (keepalive \(keepalive) s)")
    report.line()
    report.line("| | wake-ups of the link's loop thread in \(Figure.seconds(duration)) | expected |")
    report.line("|---|---|---|")
    // Per keepalive: the timer that sends PINGREQ, and PINGRESP arriving.
    let expected = 2 * Int(duration.components.seconds) / (keepalive + 1)
    report.line("| NotifyBus link | \(after.map { b in before.map { b - $0 } ?? -1 }.map(String.init) ?? "?") | about \(expected) (per keepalive: the timer sending PINGREQ, then PINGRESP) |")
    try report.finish()
    await link.stop()
    await loop.shutdown()
}

/// The voluntary context switches of this process's thread named `name`.
func switches(ofThreadNamed name: String) -> Int? {
    ProcessStats.threads(of: getpid()).first { $0.name.hasPrefix(name) }.map { Int($0.voluntarySwitches) }
}
