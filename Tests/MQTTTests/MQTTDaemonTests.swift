import NotifyBus
import NotifyBusMQTT
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `notifybusd --mqtt …` in a child process on a private bus (its network source fed by a mock
/// NetworkManager), against a real Mosquitto broker.
@Suite(.serialized) struct MQTTDaemonTests {
    static let prefix = "fleet/kiosks"
    static let online = "fleet/kiosks/kiosk-1/$online"

    func start(_ broker: MosquittoBroker) async throws -> DaemonBed {
        try await DaemonBed(arguments: [
            "--mqtt", broker.url, "--mqtt-prefix", Self.prefix, "--mqtt-host-id", "kiosk-1", "--mqtt-pattern", "network/**",
        ])
    }

    @Test func theDaemonPublishesItsBusAndListsTheLinkAmongItsSources() async throws {
        let broker = try await MosquittoBroker()
        let bed = try await start(broker)
        let topic = "fleet/kiosks/kiosk-1/network/connectivity"
        #expect(await eventually(timeout: .seconds(20)) {
            let retained = (try? await broker.retained("fleet/kiosks/#")) ?? [:]
            return retained[Self.online] == "true" && retained[topic] != nil
        }, "\(readFile(bed.log) ?? "")")
        let watcher = try bed.notifywatch(["network/**"])
        let sources = bed.lines(of: watcher) { $0["source"]?.stringValue == "mqtt" }
        #expect(sources?.last?["status"]?.stringValue == "running", "\(sources ?? [])")

        try await bed.setConnectivity(2)
        #expect(await eventually(timeout: .seconds(20)) {
            (try? await broker.retained("fleet/kiosks/#"))?.payload(topic)?.value == "portal"
        })
        let status = bed.daemon.terminate(signal: SIGTERM)
        #expect(status.flatMap(ChildProcess.exitStatus(ofWaitStatus:)) == 0)
        #expect(try await broker.retained(Self.online)[Self.online] == "false")
    }

    @Test func aDaemonThatVanishesIsMarkedOfflineByItsWill() async throws {
        let broker = try await MosquittoBroker()
        let bed = try await start(broker)
        #expect(await eventually(timeout: .seconds(20)) {
            (try? await broker.retained(Self.online))?[Self.online] == "true"
        })
        bed.daemon.terminate(signal: SIGKILL)
        #expect(await eventually(timeout: .seconds(10)) {
            (try? await broker.retained(Self.online))?[Self.online] == "false"
        })
    }

    @Test(arguments: [
        (["--mqtt", "http://broker"], "mqtt:// or mqtts://"),
        (["--mqtt", "mqtt://user:secret@broker"], "credentials"),
        (["--mqtt", "mqtt://broker", "--mqtt-config", "/nonexistent/link.conf"], "/nonexistent/link.conf"),
        (["--mqtt", "mqtt://broker", "--mqtt-host-id", "a/b"], "contains /"),
        (["--mqtt", "mqtt://broker", "--mqtt-host-id", "a+b"], "contains +"),
        (["--mqtt-prefix", "fleet"], "--mqtt-config, --mqtt-prefix, --mqtt-host-id and --mqtt-pattern need --mqtt URL"),
        (["--mqtt-pattern", "battery/**"], "--mqtt-config, --mqtt-prefix, --mqtt-host-id and --mqtt-pattern need --mqtt URL"),
        (["--mqtt", "mqtt://broker", "--mqtt-prefix", "fleet/#"], "--mqtt-prefix: "),
    ])
    func badMQTTOptionsExit64NamingWhatIsWrong(arguments: [String], expected: String) async throws {
        let log = try makeTemporaryFile("notifybusd-options")
        defer { unlink(log) }
        let daemon = try ChildProcess(Paths.notifybusd, arguments, environment: ChildProcess.environment(with: [:]), log: log)
        let status = await daemon.exit(within: .seconds(20))
        #expect(status.flatMap(ChildProcess.exitStatus(ofWaitStatus:)) == 64)
        #expect(readFile(log)?.contains(expected) == true, "\(readFile(log) ?? "")")
    }

    @Test func anUnknownKeyInTheConfigFileExits64() async throws {
        let config = try makeTemporaryFile("notifybusd-mqtt-config")
        defer { unlink(config) }
        try writeFile(config, "username = kiosk\npasword = typo\n")
        let log = try makeTemporaryFile("notifybusd-options")
        defer { unlink(log) }
        let daemon = try ChildProcess(
            Paths.notifybusd, ["--mqtt", "mqtt://broker", "--mqtt-config", config], environment: ChildProcess.environment(with: [:]), log: log)
        #expect(await daemon.exit(within: .seconds(20)).flatMap(ChildProcess.exitStatus(ofWaitStatus:)) == 64)
        #expect(readFile(log)?.contains("unknown key \"pasword\"") == true, "\(readFile(log) ?? "")")
    }
}
