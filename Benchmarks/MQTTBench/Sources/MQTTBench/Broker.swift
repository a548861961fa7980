import ChildProcess
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A Mosquitto broker of the benchmark's own: a free loopback port, persistence on (so queued
/// messages and sessions survive a restart, as on any production broker), stopped with SIGTERM.
final class Broker: Sendable {
    let directory: String
    let port: Int
    private let process = Mutex<ChildProcess?>(nil)

    /// A broker; `settings` (mosquitto.conf lines) are added to the benchmark's own.
    init(settings: String = "") throws {
        var template = Array("/tmp/mqtt-bench-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchError("mkdtemp: errno \(errno)") }
        directory = String(cString: made)
        port = try freePort()
        let user = getpwuid(geteuid()).flatMap { $0.pointee.pw_name.map { String(cString: $0) } } ?? "root"
        let config = """
            listener \(port) 127.0.0.1
            allow_anonymous true
            persistence true
            persistence_location \(directory)/
            max_queued_messages 100000
            user \(user)
            \(settings)
            """
        guard let file = fopen("\(directory)/mosquitto.conf", "w") else { throw BenchError("cannot write the broker's config") }
        fputs(config + "\n", file)
        fclose(file)
        try start()
    }

    deinit {
        stop()
        _ = system("rm -rf '\(directory)'")
    }

    var url: String { "mqtt://127.0.0.1:\(port)" }

    /// The broker process while it runs.
    var processID: pid_t? { process.withLock { $0?.pid } }

    func start() throws {
        let log = "\(directory)/mosquitto.log"
        let child = try ChildProcess(
            executable: "/usr/sbin/mosquitto", arguments: ["-c", "\(directory)/mosquitto.conf"],
            standardInput: .inherit, standardOutput: .append(log), standardError: .standardOutput)
        process.withLock { $0 = child }
        let deadline = ContinuousClock.now + .seconds(10)
        while !canConnect(port: port) {
            guard ContinuousClock.now < deadline else { throw BenchError("mosquitto did not start") }
            usleep(5_000)
        }
    }

    /// Stops the broker (SIGTERM; it saves its persistence file) and waits until it has exited.
    func stop() {
        let child = process.withLock { process -> ChildProcess? in defer { process = nil }; return process }
        child?.terminate(timeout: .seconds(60))
    }
}

func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let size = socklen_t(MemoryLayout<sockaddr_in>.size)
    guard withUnsafePointer(to: &address, { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) } }) == 0
    else { throw BenchError("bind: errno \(errno)") }
    var length = size
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
    return Int(UInt16(bigEndian: address.sin_port))
}

func canConnect(port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    let size = socklen_t(MemoryLayout<sockaddr_in>.size)
    return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, size) } } == 0
}

/// Polls `condition` every millisecond until it holds or `timeout` passes; returns whether it held.
func wait(timeout: Duration, _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        usleep(1_000)
    }
    return true
}

/// The `fraction` quantile of `values` (sorted here), in milliseconds with two decimals.
func quantile(_ values: [Duration], _ fraction: Double) -> String {
    guard !values.isEmpty else { return "–" }
    let sorted = values.sorted()
    let value = sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
    let milliseconds = Double(value.components.seconds) * 1000 + Double(value.components.attoseconds) / 1e15
    return String(Int((milliseconds * 100).rounded())).withDecimals(2) + " ms"
}

extension String {
    /// "12345" with 2 decimals: "123.45".
    func withDecimals(_ decimals: Int) -> String {
        let padded = String(repeating: "0", count: max(0, decimals + 1 - count)) + self
        return padded.dropLast(decimals) + "." + padded.suffix(decimals)
    }
}

func seconds(_ duration: Duration) -> String {
    let milliseconds = Int(duration.components.seconds) * 1000 + Int(duration.components.attoseconds / 1_000_000_000_000_000)
    return String(milliseconds).withDecimals(3) + " s"
}
