import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A real broker that speaks MQTT 3.1.1 only: amqtt (PyPI), which refuses an MQTT 5 CONNECT with
/// CONNACK 1, "unacceptable protocol version", as a 3.1.1 broker must. It keeps everything in
/// memory: a restart loses its retained values and sessions. `scripts/bootstrap` installs it
/// into `.build-python`.
final class AmqttBroker: MQTTBroker {
    let directory: String
    let port: Int
    let log: String
    private let configPath: String
    private let process: BrokerProcess

    /// amqtt's command, in the package's Python environment.
    static let executable: String = {
        let fixtures = Paths.fixtures
        let root = fixtures.replacingSuffix("/Tests/TestSupport/Fixtures", with: "")
        return root + "/.build-python/bin/amqtt"
    }()

    init() async throws {
        guard access(Self.executable, X_OK) == 0 else {
            throw HarnessError("\(Self.executable) is missing: scripts/bootstrap installs amqtt")
        }
        directory = try makeTemporaryDirectory("notifybus-amqtt")
        port = try freeLoopbackPort()
        configPath = "\(directory)/amqtt.yaml"
        log = "\(directory)/amqtt.log"
        process = BrokerProcess(Self.executable, ["-c", configPath], port: port, log: log)
        try writeFile(configPath, """
            listeners:
              default:
                type: tcp
                bind: 127.0.0.1:\(port)
            plugins:
              amqtt.plugins.authentication.AnonymousAuthPlugin:
                allow_anonymous: true

            """)
        try await start()
    }

    deinit { removeTree(directory) }

    var url: String { "mqtt://127.0.0.1:\(port)" }

    var clientOptions: [String] { ["-h", "127.0.0.1", "-p", "\(port)", "-V", "mqttv311"] }

    /// Starts the broker and waits until it accepts connections.
    func start() async throws { try await process.start() }

    /// Stops it (SIGTERM: it forgets everything) and waits for it to exit.
    func stop() { process.stop() }
}

extension String {
    fileprivate func replacingSuffix(_ suffix: String, with replacement: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) + replacement : self
    }
}
