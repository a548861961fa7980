import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A child process the tests started, its output in a log file: daemons and tools the tests
/// run but do not talk to over standard input and output (for those, see `ChildProcess`). It is
/// killed (and reaped) when this object goes away. Only this PID is ever signalled.
public final class Spawned: Sendable {
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
        var descriptors: [Int32: ChildDescriptor] = [0: .read("/dev/null"), 1: .append(log), 2: .copy(1)]
        for (child, ours) in extraDescriptors { descriptors[child] = .copy(ours) }
        pid = try spawnChild(executable, arguments, environment: environment, descriptors: descriptors)
    }

    /// Starts `executable` with a socket as its descriptor `reportDescriptor` (e.g. for
    /// `--print-address=3` or `-displayfd 3`) and waits up to `timeout` for the line it reports
    /// there; our end is closed only after that (closing it earlier can make the child die).
    /// - Returns: the process and the line, without its newline.
    public static func start(
        _ executable: String, _ arguments: [String], environment: [String: String], log: String,
        reportingOn reportDescriptor: Int32, timeout: Duration
    ) throws -> (process: Spawned, line: String) {
        let (ours, theirs) = try socketPair()
        defer { close(ours) }
        let process: Spawned
        do {
            process = try Spawned(executable, arguments, environment: environment, log: log, extraDescriptors: [reportDescriptor: theirs])
        } catch {
            close(theirs)
            throw error
        }
        close(theirs)
        var collected: [UInt8] = []
        let deadline = ContinuousClock.now + timeout
        while !collected.contains(UInt8(ascii: "\n")) {
            guard ContinuousClock.now < deadline else {
                process.terminate()
                throw HarnessError("\(executable) reported nothing on descriptor \(reportDescriptor); see \(log)")
            }
            var descriptor = pollfd(fd: ours, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, 100) <= 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 512)
            let n = read(ours, &chunk, chunk.count)
            if n <= 0 {
                process.terminate()
                throw HarnessError("\(executable) exited; see \(log)")
            }
            collected += chunk[0..<n]
        }
        return (process, String(decoding: collected.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self))
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
        throw HarnessError("\(([executable] + arguments).joined(separator: " ")) exited with wait status \(status ?? -1): \(output)")
    }
    return output
}
