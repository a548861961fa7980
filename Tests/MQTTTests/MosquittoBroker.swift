import Synchronization
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A real Mosquitto broker (Debian's `mosquitto`) for one test: its own directory, config and
/// free loopback port; persistence on (retained messages and sessions survive a restart, as on
/// any production broker) unless asked otherwise; stopped with SIGTERM and started again on the
/// same port for an outage.
final class MosquittoBroker: TestBroker {
    enum Security: Sendable {
        case anonymous
        case password(user: String, password: String)
        case tls
        /// TLS, and a client certificate the broker's CA signed is required.
        case clientCertificate
    }

    let directory: String
    let port: Int
    let security: Security
    let configPath: String
    let log: String
    private let process: BrokerProcess

    static let executable = "/usr/sbin/mosquitto"

    /// A broker; `settings` are more lines of its configuration.
    init(_ security: Security = .anonymous, persistence: Bool = true, settings: [String] = []) async throws {
        directory = try makeTemporaryDirectory("notifybus-mosquitto")
        port = try freeLoopbackPort()
        self.security = security
        configPath = "\(directory)/mosquitto.conf"
        log = "\(directory)/mosquitto.log"
        process = BrokerProcess(Self.executable, ["-c", configPath], port: port, log: log)
        var lines = [
            "listener \(port) 127.0.0.1",
            "persistence \(persistence)",
            "persistence_location \(directory)/",
            "autosave_interval 1",
            // Started as root, mosquitto drops to its own user, who cannot open our files.
            "user \(currentUserName())",
            "log_type all",
        ]
        switch security {
        case .anonymous:
            lines.append("allow_anonymous true")
        case .password(let user, let password):
            _ = try await runCommand("/usr/bin/mosquitto_passwd", ["-b", "-c", "\(directory)/passwd", user, password], environment: ChildProcess.environment(with: [:]))
            lines += ["allow_anonymous false", "password_file \(directory)/passwd"]
        case .tls, .clientCertificate:
            try await makeCertificates(in: directory)
            lines += [
                "allow_anonymous true", "cafile \(directory)/ca.pem", "certfile \(directory)/server.pem",
                "keyfile \(directory)/server.key",
            ]
            if case .clientCertificate = security { lines.append("require_certificate true") }
        }
        try writeFile(configPath, (lines + settings).joined(separator: "\n") + "\n")
        try await start()
    }

    deinit { removeTree(directory) }

    /// `mqtt://127.0.0.1:PORT` (or `mqtts://` for TLS).
    var url: String {
        switch security {
        case .tls, .clientCertificate: "mqtts://127.0.0.1:\(port)"
        case .anonymous, .password: "mqtt://127.0.0.1:\(port)"
        }
    }

    /// Starts the broker and waits until it accepts connections.
    func start() async throws { try await process.start() }

    /// Stops it with SIGTERM (it saves its state) and waits for it to exit.
    func stop() { process.stop() }

    /// The running broker's process ID.
    var pid: pid_t? { process.pid }

    /// The CA certificate clients trust (TLS brokers).
    var caFile: String { "\(directory)/ca.pem" }
    /// A client certificate the CA signed, and its key (TLS brokers).
    var clientCertificate: (cert: String, key: String) { ("\(directory)/client.pem", "\(directory)/client.key") }

    /// Options of mosquitto_sub and mosquitto_pub for this broker.
    var clientOptions: [String] {
        var options = ["-h", "127.0.0.1", "-p", "\(port)"]
        switch security {
        case .anonymous: break
        case .password(let user, let password): options += ["-u", user, "-P", password]
        case .tls: options += ["--cafile", caFile]
        case .clientCertificate:
            options += ["--cafile", caFile, "--cert", clientCertificate.cert, "--key", clientCertificate.key]
        }
        return options
    }
}

/// A real broker run by a test: where it listens, and how `mosquitto_sub` reaches it.
protocol TestBroker: Sendable {
    /// `mqtt://127.0.0.1:PORT` (or `mqtts://`).
    var url: String { get }
    /// A directory of the test's own, removed with the broker.
    var directory: String { get }
    /// Options of mosquitto_sub and mosquitto_pub for this broker.
    var clientOptions: [String] { get }
}

extension TestBroker {
    /// What a subscriber to `filter` receives within `seconds` (`mosquitto_sub -W`): one entry
    /// per message, `retained` telling a retained value from a live one, `qos` as delivered.
    /// `session` names a persistent session (clean session off), which the broker keeps while
    /// the client is away, queueing QoS 1 messages for it.
    func receive(_ filter: String, seconds: Int = 1, session: String? = nil) async throws -> [Received] {
        var arguments = clientOptions + ["-t", filter, "-q", "1", "-W", "\(seconds)", "-F", "%r %q %t %p"]
        if let session { arguments += ["-c", "-i", session] }
        let output = try await runTolerant("/usr/bin/mosquitto_sub", arguments)
        return output.split(separator: "\n").compactMap(Received.init)
    }

    /// The retained value of every topic under `filter` now.
    func retained(_ filter: String) async throws -> [String: String] {
        var values: [String: String] = [:]
        for message in try await receive(filter) where message.retained { values[message.topic] = message.payload }
        return values
    }
}

/// A broker's process: started, waited for on its port, stopped for an outage, killed with the
/// test.
final class BrokerProcess: Sendable {
    let executable: String
    let arguments: [String]
    let port: Int
    let log: String
    private let process = Mutex<ChildProcess?>(nil)

    init(_ executable: String, _ arguments: [String], port: Int, log: String) {
        self.executable = executable
        self.arguments = arguments
        self.port = port
        self.log = log
    }

    deinit { _ = process.withLock { $0?.terminate(signal: SIGKILL) } }

    /// Starts it and waits until it accepts connections.
    func start() async throws {
        let spawned = try ChildProcess(executable, arguments, environment: ChildProcess.environment(with: [:]), log: log)
        process.withLock { $0 = spawned }
        let port = self.port
        guard await eventually(timeout: .seconds(20), { canConnect(port: port) }) else {
            throw HarnessError("\(executable) did not listen on \(port): \(readFile(log) ?? "")")
        }
    }

    /// Stops it with SIGTERM and waits for it to exit.
    func stop() {
        let spawned = process.withLock { process in
            defer { process = nil }
            return process
        }
        spawned?.terminate(signal: SIGTERM, timeout: .seconds(10))
    }

    /// Its process ID while it runs.
    var pid: pid_t? { process.withLock { $0?.pid } }
}

/// A message as `mosquitto_sub -F "%r %q %t %p"` prints it.
struct Received: Sendable, Hashable, CustomStringConvertible {
    var retained: Bool
    var qos: Int
    var topic: String
    var payload: String

    init?(_ line: Substring) {
        let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 4, let qos = Int(parts[1]) else { return nil }
        retained = parts[0] == "1"
        self.qos = qos
        topic = String(parts[2])
        payload = String(parts[3])
    }

    var description: String { "\(retained ? "R" : "L") q\(qos) \(topic) \(payload)" }
}

/// Runs a command to its end and returns its output, whatever its exit status (`mosquitto_sub
/// -W` ends with one when its time is up).
func runTolerant(_ executable: String, _ arguments: [String]) async throws -> String {
    let log = try makeTemporaryFile("notifybus-command")
    defer { unlink(log) }
    let process = try ChildProcess(executable, arguments, environment: ChildProcess.environment(with: [:]), log: log)
    _ = await process.exit(within: .seconds(30)) ?? process.terminate(signal: SIGKILL)
    return readFile(log) ?? ""
}

/// A CA, a server certificate it signed for 127.0.0.1 and localhost, and a client certificate
/// it signed, made with openssl.
private func makeCertificates(in directory: String) async throws {
    let env = ChildProcess.environment(with: [:])
    let openssl = "/usr/bin/openssl"
    _ = try await runCommand(openssl, [
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=NotifyBus test CA",
        "-keyout", "\(directory)/ca.key", "-out", "\(directory)/ca.pem",
    ], environment: env)
    _ = try await runCommand(openssl, [
        "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
        "-keyout", "\(directory)/server.key", "-out", "\(directory)/server.csr",
    ], environment: env)
    try writeFile("\(directory)/san.ext", "subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    _ = try await runCommand(openssl, [
        "x509", "-req", "-in", "\(directory)/server.csr", "-CA", "\(directory)/ca.pem", "-CAkey", "\(directory)/ca.key",
        "-CAcreateserial", "-days", "2", "-extfile", "\(directory)/san.ext", "-out", "\(directory)/server.pem",
    ], environment: env)
    _ = try await runCommand(openssl, [
        "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=kiosk-7",
        "-keyout", "\(directory)/client.key", "-out", "\(directory)/client.csr",
    ], environment: env)
    _ = try await runCommand(openssl, [
        "x509", "-req", "-in", "\(directory)/client.csr", "-CA", "\(directory)/ca.pem", "-CAkey", "\(directory)/ca.key",
        "-CAcreateserial", "-days", "2", "-out", "\(directory)/client.pem",
    ], environment: env)
}

/// A loopback TCP port nobody listens on now.
func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw HarnessError("socket: errno \(errno)") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else { throw HarnessError("bind: errno \(errno)") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Whether a TCP connection to 127.0.0.1:`port` succeeds now.
func canConnect(port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    } == 0
}

private func currentUserName() -> String {
    guard let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name else { return "root" }
    return String(cString: name)
}
