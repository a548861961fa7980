import NotifyBus
import NotifyBusMQTT
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `notifywatch --mqtt` watching a fleet of two links through a real broker.
@Suite(.serialized) struct MQTTWatchTests {
    func watch(_ broker: any MQTTBroker, _ arguments: [String], url: String? = nil) throws -> ChildProcess {
        try ChildProcess(
            executable: Paths.executable("notifywatch"),
            arguments: ["--mqtt", url ?? broker.url, "--mqtt-prefix", "nb"] + arguments, environment: ChildProcess.environment(with: [:]),
            standardError: .append("\(broker.directory)/notifywatch.log"))
    }

    /// Lines until one satisfies `predicate` (included), parsed; `nil` on timeout.
    func lines(
        of process: ChildProcess, within timeout: Duration = .seconds(20), until predicate: (JSONValue) -> Bool
    ) -> [JSONValue]? {
        var lines: [JSONValue] = []
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let text = process.readLine(timeout: deadline - ContinuousClock.now) else { return nil }
            guard let line = try? JSONValue(parsing: text) else { continue }
            lines.append(line)
            if predicate(line) { return lines }
        }
        return nil
    }

    @Test func currentValuesOfEveryHostThenLiveOnesThenAvailability() async throws {
        let broker = try await MosquittoBroker()
        let first = NotificationBus()
        first.publish("battery/BAT0/level", 0.5)
        first.publish("odd/a+b", "plus")
        let second = NotificationBus()
        second.publish("battery/BAT0/level", 0.9)
        let one = try LinkBed(broker: broker, bus: first, hostID: "kiosk-1")
        let two = try LinkBed(broker: broker, bus: second, hostID: "kiosk-2")
        #expect(await one.waitUntilSettled())
        #expect(await two.waitUntilSettled())

        let watcher = try watch(broker, ["--json", "*/battery/**", "kiosk-1/odd/*"])
        var seen: [JSONValue] = []
        func notifications() -> [JSONValue] { seen.filter { $0["type"]?.stringValue == "notification" } }
        func sources() -> [JSONValue] { seen.filter { $0["type"]?.stringValue == "source" } }
        let startup = lines(of: watcher) { line in
            seen.append(line)
            return notifications().count == 3 && sources().filter { $0["source"]?.stringValue?.hasPrefix("host:") == true }.count == 2
        }
        #expect(startup != nil, "\(seen)")
        let kiosk1 = notifications().first { $0["host"] == "kiosk-1" && $0["key"] == "battery/BAT0/level" }
        #expect(kiosk1?["value"] == 0.5 && kiosk1?["coalesced"] == 0 && kiosk1?["subscriber"] == "mqtt")
        #expect(kiosk1?["time"]?.stringValue?.hasSuffix("Z") == true)
        #expect(notifications().contains { $0["host"] == "kiosk-2" && $0["key"] == "battery/BAT0/level" && $0["value"] == 0.9 })
        #expect(notifications().contains { $0["host"] == "kiosk-1" && $0["key"] == "odd/a+b" && $0["value"] == "plus" })
        #expect(sources().contains { $0["source"] == "host:kiosk-2" && $0["status"] == "running" })

        first.publish("battery/BAT0/level", 0.45)
        let live = lines(of: watcher) { $0["type"] == "notification" }?.last
        #expect(live?["host"] == "kiosk-1" && live?["value"] == 0.45 && live?["coalesced"] == 1 && live?["previous"] == 0.5)

        await two.shutdown()
        let offline = lines(of: watcher) { $0["source"] == "host:kiosk-2" }?.last
        #expect(offline?["status"] == "unavailable" && offline?["reason"] == "offline")
        kill(watcher.pid, SIGTERM)
        #expect(watcher.waitForExit(timeout: .seconds(10)).flatMap(ChildProcess.exitStatus(ofWaitStatus:)) == 0)
        await one.shutdown()
    }

    @Test func humanOutputHasAHostColumn() async throws {
        let broker = try await MosquittoBroker()
        let bus = NotificationBus()
        bus.publish("power/profile", "balanced")
        let link = try LinkBed(broker: broker, bus: bus, hostID: "laptop-3")
        #expect(await link.waitUntilSettled())
        // By name: looked up off the watcher's loop, then connected by libmosquitto.
        let watcher = try watch(broker, ["--color", "never"], url: "mqtt://localhost:\(broker.port)")
        var lines: [String] = []
        while let line = watcher.readLine(timeout: .seconds(20)) {
            lines.append(line)
            if line.contains("power/profile") { break }
        }
        #expect(lines.contains { $0.contains("laptop-3") && $0.contains("● online") }, "\(lines)")
        #expect(lines.last?.contains("laptop-3") == true && lines.last?.contains("\"balanced\"  (current)") == true, "\(lines)")
        await link.shutdown()
    }

    @Test func aBrokerThatSpeaksOnlyMQTT311() async throws {
        let broker = try await AmqttBroker()
        let bus = NotificationBus()
        bus.publish("net/connectivity", "full")
        let link = try LinkBed(broker: broker, bus: bus, hostID: "pos-9")
        #expect(await link.waitUntilSettled(), "\(link.statuses.all)")
        let watcher = try watch(broker, ["--json"])
        // amqtt leaves the watcher's MQTT 5 CONNECT unanswered: 3.1.1 after 10 s.
        let seen = lines(of: watcher, within: .seconds(30)) { $0["type"] == "notification" }
        #expect(seen?.last?["host"] == "pos-9" && seen?.last?["value"] == "full", "\(seen ?? [])")
        // The watcher's refusal of MQTT 5 is not reported as the broker being unavailable.
        #expect(seen?.contains { $0["source"] == "mqtt" && $0["status"] != "running" } == false, "\(seen ?? [])")
        kill(watcher.pid, SIGTERM)
        #expect(watcher.waitForExit(timeout: .seconds(10)).flatMap(ChildProcess.exitStatus(ofWaitStatus:)) == 0)
        await link.shutdown()
    }

    @Test func signalsSuspendAndResumeTheWatcherWithOneLinePerHostKey() async throws {
        let broker = try await MosquittoBroker()
        let bus = NotificationBus()
        bus.publish("battery/BAT0/level", 0.5)
        let link = try LinkBed(broker: broker, bus: bus, hostID: "kiosk-1")
        #expect(await link.waitUntilSettled())
        let watcher = try watch(broker, ["--json"])
        #expect(lines(of: watcher) { $0["type"] == "notification" } != nil)
        kill(watcher.pid, SIGUSR1)
        #expect(lines(of: watcher) { $0["type"] == "suspended" }?.last?["subscriber"] == "mqtt")
        for level: JSONValue in [0.49, 0.48, 0.47] {
            bus.publish("battery/BAT0/level", level)
            #expect(await link.waitUntilSettled())
        }
        bus.publish("power/AC/online", false)
        #expect(await link.waitUntilSettled())
        // The broker's messages have reached the watcher (its QoS 1 subscription) before USR2.
        try await Task.sleep(for: .milliseconds(500))
        kill(watcher.pid, SIGUSR2)
        let flush = lines(of: watcher) { $0["key"] == "power/AC/online" }
        let resumed = flush?.first { $0["type"] == "resumed" }
        #expect(resumed?["flushed"] == 2 && resumed?["subscriber"] == "mqtt", "\(flush ?? [])")
        let level = flush?.first { $0["key"] == "battery/BAT0/level" }
        #expect(level?["value"] == 0.47 && level?["coalesced"] == 3 && level?["previous"] == 0.5, "\(flush ?? [])")
        kill(watcher.pid, SIGTERM)
        #expect(watcher.waitForExit(timeout: .seconds(10)).flatMap(ChildProcess.exitStatus(ofWaitStatus:)) == 0)
        await link.shutdown()
    }

    @Test(arguments: [
        (["--daemon"], "--daemon"), (["--record", "/tmp/x.jsonl"], "--record"), (["--source", "power"], "--source"),
        (["--policy", "all"], "--policy"), (["--limit", "5"], "--limit"), (["--no-initial"], "--no-initial"),
        (["--mqtt-config", "/nonexistent/watch.conf"], "/nonexistent/watch.conf"), (["a+b/k"], "HOST/PATTERN"),
    ])
    func optionsThatDoNotApplyToAFleetAreRefused(arguments: [String], expected: String) async throws {
        try await expectRefusal(of: ["--mqtt", "mqtt://127.0.0.1:1"] + arguments, saying: expected)
    }

    @Test(arguments: [
        (["--mqtt-prefix", "nb"], "--mqtt-config and --mqtt-prefix need --mqtt URL"),
        (["--mqtt-config", "/nonexistent/watch.conf"], "--mqtt-config and --mqtt-prefix need --mqtt URL"),
        (["--mqtt", "mqtt://127.0.0.1:1", "--mqtt-prefix", "a+b"], "--mqtt-prefix: the prefix \"a+b\" contains +"),
        (["--mqtt", "http://broker"], "mqtt:// or mqtts://"),
    ])
    func badBrokerOptionsExit64NamingWhatIsWrong(arguments: [String], expected: String) async throws {
        try await expectRefusal(of: arguments, saying: expected)
    }

    /// notifywatch run with `arguments` exits 64, its message containing `expected`.
    func expectRefusal(of arguments: [String], saying expected: String) async throws {
        let log = try makeTemporaryFile("notifywatch-options")
        defer { unlink(log) }
        let watcher = try ChildProcess(Paths.executable("notifywatch"), arguments, environment: ChildProcess.environment(with: [:]), log: log)
        #expect(await watcher.exit(within: .seconds(20)).flatMap(ChildProcess.exitStatus(ofWaitStatus:)) == 64)
        #expect(readFile(log)?.contains(expected) == true, "\(readFile(log) ?? "")")
    }

    @Test func credentialsFromTheConfigFile() async throws {
        let broker = try await MosquittoBroker(.password(user: "ops", password: "fleet pass"))
        let bus = NotificationBus()
        bus.publish("session/locked", true)
        let link = try LinkBed(broker: broker, bus: bus, hostID: "kiosk-4", config: "username = ops\npassword = fleet pass\n")
        #expect(await link.waitUntilSettled(), "\(link.statuses.all)")
        let good = "\(broker.directory)/watch.conf"
        try writeFile(good, "username = ops\npassword = fleet pass\n")
        let watcher = try watch(broker, ["--json", "--mqtt-config", good])
        let seen = lines(of: watcher) { $0["type"] == "notification" }
        #expect(seen?.last?["host"] == "kiosk-4" && seen?.last?["value"] == true, "\(seen ?? [])")
        kill(watcher.pid, SIGTERM)
        #expect(watcher.waitForExit(timeout: .seconds(10)).flatMap(ChildProcess.exitStatus(ofWaitStatus:)) == 0)
        // A wrong password: the broker's refusal, as the `mqtt` source's reason.
        let bad = "\(broker.directory)/wrong.conf"
        try writeFile(bad, "username = ops\npassword = guess\n")
        let refused = try watch(broker, ["--json", "--mqtt-config", bad])
        let status = lines(of: refused) { $0["source"] == "mqtt" }?.last
        #expect(status?["status"] == "unavailable", "\(String(describing: status))")
        #expect(status?["reason"]?.stringValue?.lowercased().contains("not authori") == true, "\(String(describing: status))")
        kill(refused.pid, SIGTERM)
        #expect(refused.waitForExit(timeout: .seconds(10)).flatMap(ChildProcess.exitStatus(ofWaitStatus:)) == 0)
        await link.shutdown()
    }

    @Test func aMessageLargerThanAnyLinkSendsNeverReachesTheWatcher() async throws {
        let broker = try await MosquittoBroker()
        // 4 MiB retained under the prefix, from anybody: the MQTT 5 watcher asks the broker for
        // nothing over about 1 MiB, so it is neither sent nor held.
        let big = "\(broker.directory)/big.json"
        try writeFile(big, "{\"value\":\"" + String(repeating: "a", count: 4 << 20) + "\"}")
        let environment = ChildProcess.environment()
        _ = try await runCommandToEnd(
            "/usr/bin/mosquitto_pub", broker.clientOptions + ["-t", "nb/odd/big", "-f", big, "-r", "-q", "1"], environment: environment)
        _ = try await runCommandToEnd(
            "/usr/bin/mosquitto_pub", broker.clientOptions + ["-t", "nb/odd/small", "-m", #"{"value":5}"#, "-r", "-q", "1"],
            environment: environment)
        let watcher = try watch(broker, ["--json"])
        let seen = lines(of: watcher) { $0["key"] == "small" }
        #expect(seen?.last?["value"] == 5 && seen?.contains { $0["key"] == "big" } == false, "\(seen ?? [])")
        let later = watcher.readLine(timeout: .seconds(2))
        #expect(later == nil, "\(later?.prefix(200) ?? "")")
        let rss = readFile("/proc/\(watcher.pid)/status")?.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
        let kib = rss.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? .max
        #expect(kib < 64 << 10, "\(String(describing: rss))")
        kill(watcher.pid, SIGTERM)
        #expect(watcher.waitForExit(timeout: .seconds(10)).flatMap(ChildProcess.exitStatus(ofWaitStatus:)) == 0)
    }
}
