import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A child process the tests started: its output goes to a log file, and it is killed (and
/// reaped) when this object goes away. Only this PID is ever signalled.
public final class Spawned: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    public let pid: pid_t
    public let executable: String
    private let reaped = Mutex<Int32?>(nil)

    /// Starts `executable` with `arguments` in `environment` (complete), stdout and stderr
    /// appended to `log`, stdin from /dev/null; `extraDescriptors` maps child fd → our fd.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String], log: String,
        extraDescriptors: [Int32: Int32] = [:]
    ) throws {
        self.executable = executable
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        for (child, ours) in extraDescriptors { posix_spawn_file_actions_adddup2(&actions, ours, child) }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        // A clean signal state: the spawning thread may block or ignore signals the child needs.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGPIPE, SIGCHLD, SIGHUP, SIGUSR1, SIGUSR2] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else { throw Failure("posix_spawn \(executable): errno \(result)") }
        self.pid = pid
    }

    deinit {
        terminate(signal: SIGKILL)
    }

    /// Whether it has exited (reaping it if so).
    public var hasExited: Bool {
        reaped.withLock { status in
            if status != nil { return true }
            var raw: Int32 = 0
            if waitpid(pid, &raw, WNOHANG) == pid { status = raw; return true }
            return false
        }
    }

    /// Waits up to `timeout` for it to exit by itself (without blocking a thread); returns its
    /// wait status, or `nil` if it is still running.
    public func exit(within timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let status = exitStatus { return status }
            if ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Its wait status once it has exited (reaping it if so); `nil` while it runs.
    public var exitStatus: Int32? {
        reaped.withLock { status in
            if status != nil { return status }
            var raw: Int32 = 0
            if waitpid(pid, &raw, WNOHANG) == pid { status = raw }
            return status
        }
    }

    /// Sends `signal` (unless it has exited) and waits up to `timeout` for it to exit; SIGKILL after that.
    @discardableResult
    public func terminate(signal: Int32 = SIGTERM, timeout: Duration = .seconds(5)) -> Int32? {
        reaped.withLock { status -> Int32? in
            if let status { return status }
            kill(pid, signal)
            let deadline = ContinuousClock.now + timeout
            var raw: Int32 = 0
            while ContinuousClock.now < deadline {
                let result = waitpid(pid, &raw, WNOHANG)
                if result == pid { status = raw; return raw }
                if result < 0 { status = -1; return -1 }
                usleep(2_000)
            }
            kill(pid, SIGKILL)
            waitpid(pid, &raw, 0)
            status = raw
            return raw
        }
    }
}

/// This process's environment with `changes` applied (`nil` removes a variable).
public func environment(with changes: [String: String?]) -> [String: String] {
    var result: [String: String] = [:]
    var entry = environ
    while let pointer = entry.pointee {
        let text = String(cString: pointer)
        if let equals = text.firstIndex(of: "=") {
            result[String(text[..<equals])] = String(text[text.index(after: equals)...])
        }
        entry += 1
    }
    for (name, value) in changes { result[name] = value }
    return result
}

/// A new directory under /tmp, removed by `removeTree`.
public func makeTemporaryDirectory(_ prefix: String) throws -> String {
    var template = Array("/tmp/\(prefix).XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw Spawned.Failure("mkdtemp: errno \(errno)") }
    let path = String(cString: made)
    chmod(path, 0o755)
    return path
}

/// Removes `path` and everything below it (only paths under /tmp/).
public func removeTree(_ path: String) {
    guard path.hasPrefix("/tmp/"), !path.contains("..") else { return }
    if let directory = opendir(path) {
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            let child = path + "/" + name
            var info = stat()
            if lstat(child, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
                removeTree(child)
            } else {
                unlink(child)
            }
        }
        closedir(directory)
    }
    rmdir(path)
}

/// Writes `text` to `path` (replacing it).
public func writeFile(_ path: String, _ text: String) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw Spawned.Failure("open \(path): errno \(errno)") }
    defer { close(fd) }
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { throw Spawned.Failure("write \(path): errno \(errno)") }
        offset += n
    }
}

/// The contents of `path`, or `nil`.
public func readFile(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = read(fd, &chunk, chunk.count)
        if n <= 0 { break }
        bytes += chunk[0..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Runs `executable` to its end (SIGKILL after `timeout`) and returns what it printed (standard
/// output and error); throws when it exits with another status than 0.
public func runCommand(
    _ executable: String, _ arguments: [String], environment: [String: String], timeout: Duration = .seconds(30)
) async throws -> String {
    let log = try makeTemporaryFile("notifybus-command")
    defer { unlink(log) }
    let process = try Spawned(executable, arguments, environment: environment, log: log)
    let status = await process.exit(within: timeout) ?? process.terminate(signal: SIGKILL)
    let output = readFile(log) ?? ""
    guard status == 0 else {
        throw Spawned.Failure("\(([executable] + arguments).joined(separator: " ")) exited with wait status \(status ?? -1): \(output)")
    }
    return output
}

/// A new empty file under /tmp (for the caller to remove).
public func makeTemporaryFile(_ prefix: String) throws -> String {
    var template = Array("/tmp/\(prefix).XXXXXX".utf8CString)
    let fd = mkstemp(&template)
    guard fd >= 0 else { throw Spawned.Failure("mkstemp: errno \(errno)") }
    close(fd)
    return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
