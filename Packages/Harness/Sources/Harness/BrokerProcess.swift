import Synchronization

#if canImport(Glibc)
public import Glibc
#endif

/// A broker's process: started, waited for on its port, stopped for an outage, killed with its
/// owner.
public final class BrokerProcess: Sendable {
    /// The broker program.
    public let executable: String
    /// Its arguments.
    public let arguments: [String]
    /// The loopback port it listens on.
    public let port: Int
    /// Its standard output and error.
    public let log: String
    private let process = Mutex<ChildProcess?>(nil)

    /// A broker `executable` with `arguments`, listening on `port`, logging to `log`; not started.
    public init(_ executable: String, _ arguments: [String], port: Int, log: String) {
        self.executable = executable
        self.arguments = arguments
        self.port = port
        self.log = log
    }

    deinit { _ = process.withLock { $0?.terminate(signal: SIGKILL) } }

    /// Starts it and waits until it accepts connections.
    public func start() async throws {
        let spawned = try ChildProcess(executable, arguments, environment: ChildProcess.environment(with: [:]), log: log)
        process.withLock { $0 = spawned }
        let port = self.port
        guard await eventually(timeout: .seconds(20), { canConnect(port: port) }) else {
            throw HarnessError("\(executable) did not listen on \(port): \(readFile(log) ?? "")")
        }
    }

    /// Stops it with SIGTERM and waits for it to exit.
    public func stop() {
        let spawned = process.withLock { process in
            defer { process = nil }
            return process
        }
        spawned?.terminate(signal: SIGTERM, timeout: .seconds(10))
    }

    /// Its process ID while it runs.
    public var pid: pid_t? { process.withLock { $0?.pid } }
}

