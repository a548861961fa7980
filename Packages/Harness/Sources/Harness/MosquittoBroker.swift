import Synchronization

#if canImport(Glibc)
public import Glibc
#endif

/// A real Mosquitto broker (Debian's `mosquitto`) for one test or benchmark: its own directory,
/// config and free loopback port; persistence on (retained messages and sessions survive a
/// restart, as on any production broker) unless asked otherwise; stopped with SIGTERM and started
/// again on the same port for an outage.
public final class MosquittoBroker: MQTTBroker {
    /// How clients authenticate.
    public enum Security: Sendable {
        /// Anyone connects.
        case anonymous
        /// A user and password from a password file.
        case password(user: String, password: String)
        /// TLS with a CA and a server certificate the harness makes with openssl.
        case tls
        /// TLS, and a client certificate the broker's CA signed is required.
        case clientCertificate
    }

    /// Its directory: configuration, persistence, log, certificates.
    public let directory: String
    /// The loopback port it listens on.
    public let port: Int
    /// How clients authenticate.
    public let security: Security
    /// Its configuration file.
    public let configPath: String
    /// Its log.
    public let log: String
    private let process: BrokerProcess

    /// Debian's broker.
    public static let executable = "/usr/sbin/mosquitto"

    /// A broker; `settings` are more lines of its configuration. A `quiet` one (a benchmark's,
    /// whose figures the writes would slow) logs no message (`log_type all` is for a test to read)
    /// and saves its persistence only when it stops (not every second: `autosave_interval 1`).
    public init(
        _ security: Security = .anonymous, persistence: Bool = true, quiet: Bool = false, settings: [String] = []
    ) async throws {
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
            // Started as root, mosquitto drops to its own user, who cannot open our files.
            "user \(currentUserName())",
        ]
        if !quiet { lines += ["autosave_interval 1", "log_type all"] }
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
    public var url: String {
        switch security {
        case .tls, .clientCertificate: "mqtts://127.0.0.1:\(port)"
        case .anonymous, .password: "mqtt://127.0.0.1:\(port)"
        }
    }

    /// Starts the broker and waits until it accepts connections.
    public func start() async throws { try await process.start() }

    /// Stops it with SIGTERM (it saves its state) and waits for it to exit.
    public func stop() { process.stop() }

    /// The running broker's process ID.
    public var pid: pid_t? { process.pid }

    /// The CA certificate clients trust (TLS brokers).
    public var caFile: String { "\(directory)/ca.pem" }
    /// A client certificate the CA signed, and its key (TLS brokers).
    public var clientCertificate: (cert: String, key: String) { ("\(directory)/client.pem", "\(directory)/client.key") }

    /// Options of mosquitto_sub and mosquitto_pub for this broker.
    public var clientOptions: [String] {
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

private func currentUserName() -> String {
    guard let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name else { return "root" }
    return String(cString: name)
}
