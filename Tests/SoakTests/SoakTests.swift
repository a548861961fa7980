import DBus
import Foundation
import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

// A bounded soak of the real notifywatch binary: a suspended subscriber (SIGUSR1) under a
// sustained flood of uevents (power supplies changing on a umockdev test bed) and D-Bus signals
// (SettingChanged from the portal stand-in on a private session bus). Its resident memory and
// open descriptors are sampled from /proc all along and must stay flat; after the flood, SIGUSR2
// must flush exactly one notification per key, each carrying the last value the flood set for
// that key, and the number of events it stands for.
//
// Everything is local and stops by itself: the floods end at a deadline and after a bounded
// number of changes, and wait (bounded) whenever notifywatch's recording lags behind them.
// NOTIFYBUS_SOAK_SECONDS sets how long the flood lasts (default 20), NOTIFYBUS_SOAK_SIGNAL_RATE
// and NOTIFYBUS_SOAK_UEVENT_RATE its most signals and uevents a second (default 1000 and 250);
// scripts/soak runs it longer and faster.

/// A positive whole number from the environment variable `name`, else `default`.
private func setting(_ name: String, default: Int) -> Int {
    guard let text = ProcessInfo.processInfo.environment[name], let value = Int(text), value > 0 else { return `default` }
    return value
}

/// How long the flood lasts, in seconds.
private let soakSeconds = setting("NOTIFYBUS_SOAK_SECONDS", default: 20)
/// The most D-Bus signals and uevents a second: moderate by default, as the soak runs beside
/// the other tests (scripts/soak raises them).
private let signalRate = setting("NOTIFYBUS_SOAK_SIGNAL_RATE", default: 1_000)
private let ueventRate = setting("NOTIFYBUS_SOAK_UEVENT_RATE", default: 250)

/// Runs `body` on a thread of its own (for blocking work that must not hold a thread of the
/// test runner's pool).
private func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

/// Reads lines of `process` until one satisfies `predicate`; `nil` when none comes in time.
private func readLine(of process: ChildProcess, timeout: Duration = patience, where predicate: (JSONValue) -> Bool) -> JSONValue? {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline, let line = process.readLine(timeout: deadline - ContinuousClock.now) {
        if let value = try? JSONValue(parsing: line), predicate(value) { return value }
    }
    return nil
}

@Suite("notifywatch soak")
struct SoakTests {
    @Test func aSuspendedSubscriberStaysFlatUnderAFloodAndFlushesTheTruth() async throws {
        let began = ContinuousClock.now
        let duration = Duration.seconds(soakSeconds)
        let warmUp = Double(min(20, max(3, soakSeconds / 5)))

        // The peers: power supplies on a test bed, the portal on a private session bus.
        let testbed = try Testbed()
        try UeventFlood.plug(into: testbed)
        let bus = try PrivateBus(.session)
        let portal = try await MockService(bus: bus, template: PortalFlood.template, name: PortalFlood.service.rawValue)
        let client = try DBusClient(address: bus.dbusAddress)
        try await client.waitUntilConnected()
        try await PortalFlood.prepare(client)

        let directory = try makeTemporaryDirectory("notifywatch-soak")
        defer { removeTree(directory) }
        let recording = directory + "/recording.jsonl"
        let watcher = try ChildProcess(
            executable: Paths.executable("notifywatch"),
            arguments: [
                "--source", "power", "--source", "settings", "--session-bus", bus.address,
                "--no-initial", "--json", "--record", recording,
            ],
            environment: ChildProcess.environment(with: [
                "LD_PRELOAD": Paths.preload, "UMOCKDEV_DIR": testbed.root, "NO_COLOR": nil,
                "DBUS_SESSION_BUS_ADDRESS": nil, "DBUS_SYSTEM_BUS_ADDRESS": nil,
            ]),
            standardError: .append(directory + "/stderr"))
        defer {
            if watcher.waitForExit(timeout: .milliseconds(1)) == nil {
                kill(watcher.pid, SIGKILL)
                watcher.waitForExit(timeout: patience)
            }
        }

        // Both sources running, then suspended.
        var running: Set<String> = []
        while running.count < 2 {
            let line = try #require(readLine(of: watcher) { $0["type"] == "source" }, "sources running: \(running)")
            if line["status"] == "running", let name = line["source"]?.stringValue { running.insert(name) }
        }
        kill(watcher.pid, SIGUSR1)
        #expect(readLine(of: watcher) { _ in true }?["type"] == "suspended")

        // The flood, sampled.
        let tail = RecordingTail(path: recording)
        let sampler = ProcessSampler(pid: watcher.pid)
        sampler.sample()
        let flooding = ContinuousClock.now
        let deadline = flooding + duration
        let uevents = UeventFlood(testbed: testbed, tail: tail, window: 4, limit: soakSeconds * ueventRate, rate: ueventRate)
        let signals = PortalFlood(
            client: client, tail: tail, keys: 16, burst: 100, window: 1_000, limit: soakSeconds * signalRate,
            rate: signalRate)
        async let ueventResult = onThread { uevents.run(until: deadline) }
        async let signalResult = signals.run(until: deadline)
        await sampler.run(every: .milliseconds(250), until: deadline)
        let (power, settings) = await (ueventResult, signalResult)
        #expect(power.failure == nil, "\(power.failure ?? "")")
        #expect(settings.failure == nil, "\(settings.failure ?? "")")

        // Every change reached the bus, and nothing else.
        let truth = power.truth.merging(settings.truth) { $1 }
        let sent = power.counts.merging(settings.counts) { $1 }
        let flooded = ContinuousClock.now
        let caughtUp = await eventually(timeout: patience) { tail.poll().counts == sent }
        let settled = ContinuousClock.now
        sampler.sample()
        let seen = tail.poll()
        #expect(caughtUp, "sent \(sent), recorded \(seen.counts)")
        #expect(seen.latest == truth)
        #expect(tail.unparsable.isEmpty, "\(tail.unparsable.prefix(3))")

        let figures = ResourceFigures(samples: sampler.samples, warmUp: warmUp)
        print("soak: \(soakSeconds) s; sent \(power.changes) uevent changes (\(UeventFlood.supplies.count) supplies, \(power.truth.count) keys) and \(settings.signals) D-Bus signals (\(settings.truth.count) keys); the bus recorded \(seen.total) events")
        print("soak: \(figures)")

        // Flat: after the warm-up, the last third's largest RSS is at most a small margin above
        // the first third's, and the descriptors do not grow.
        #expect(figures.measured.count >= 12, "\(figures.measured.count) samples after the warm-up")
        let rss = figures.rssThirds
        let margin = max(1_024, rss.first / 50)
        #expect(rss.last <= rss.first + margin, "RSS grew: \(figures)")
        let descriptors = figures.descriptorThirds
        #expect(descriptors.last.lowerBound <= descriptors.first.lowerBound, "descriptors grew: \(figures)")
        #expect(descriptors.last.upperBound <= descriptors.first.upperBound + 2, "descriptors grew: \(figures)")

        // Resumed: one notification per key, the truth, in the order of each key's latest event.
        kill(watcher.pid, SIGUSR2)
        let resumed = readLine(of: watcher) { _ in true }
        #expect(resumed?["type"] == "resumed")
        #expect(resumed?["flushed"]?.doubleValue == Double(truth.count))
        var flushed: [Note] = []
        while flushed.count < truth.count, let line = readLine(of: watcher, where: { _ in true }) {
            guard let note = Note(line) else {
                Issue.record("not a notification: \(line)")
                break
            }
            flushed.append(note)
        }
        #expect(flushed.map(\.key) == seen.keysByLatestEvent)
        #expect(Set(flushed.map(\.key)).count == flushed.count)
        for note in flushed {
            #expect(note.value == truth[note.key], "\(note.key)")
            #expect(note.coalesced == sent[note.key], "\(note.key)")
        }
        #expect(watcher.readLine(timeout: .milliseconds(300)) == nil, "more than the flush")
        print("soak: set up in \(flooding - began), flooded for \(flooded - flooding), caught up in \(settled - flooded), flushed in \(ContinuousClock.now - settled)")
        print("soak: flushed \(flushed.count) notifications, one per key, each the last value sent; \(flushed.map(\.coalesced).reduce(0, +)) events coalesced")

        kill(watcher.pid, SIGTERM)
        #expect(watcher.waitForExit(timeout: patience).flatMap(ChildProcess.exitStatus(ofWaitStatus:)) == 0)
        #expect(readFile(directory + "/stderr") == "")
        await client.close()
        _ = portal
    }
}
