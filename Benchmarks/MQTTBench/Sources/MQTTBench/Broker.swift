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
    private let pid = Mutex<pid_t?>(nil)

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
    var processID: pid_t? { pid.withLock { $0 } }

    func start() throws {
        let child = try spawn("/usr/sbin/mosquitto", ["-c", "\(directory)/mosquitto.conf"], log: "\(directory)/mosquitto.log")
        pid.withLock { $0 = child }
        let deadline = ContinuousClock.now + .seconds(10)
        while !canConnect(port: port) {
            guard ContinuousClock.now < deadline else { throw BenchError("mosquitto did not start") }
            usleep(5_000)
        }
    }

    func stop() {
        guard let child = pid.withLock({ pid -> pid_t? in defer { pid = nil }; return pid }) else { return }
        kill(child, SIGTERM)
        var status: Int32 = 0
        waitpid(child, &status, 0)
    }
}

/// Starts `executable` with its output appended to `log`, or its standard output to `output` (a
/// descriptor) and only its standard error to `log`.
func spawn(_ executable: String, _ arguments: [String], log: String, output: Int32? = nil) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if let output {
        posix_spawn_file_actions_adddup2(&actions, output, 1)
        posix_spawn_file_actions_addopen(&actions, 2, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
    } else {
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
    }
    // The child starts with no signal blocked and SIGTERM at its default, whatever the thread
    // that spawns it blocks (the concurrency pool's threads block signals).
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t()
    sigemptyset(&none)
    posix_spawnattr_setsigmask(&attributes, &none)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for number in [SIGTERM, SIGINT, SIGPIPE] { sigaddset(&defaults, number) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let result = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
    guard result == 0 else { throw BenchError("posix_spawn \(executable): errno \(result)") }
    return pid
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
