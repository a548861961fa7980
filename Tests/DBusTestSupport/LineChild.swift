import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A child process driven over its standard input and output, one JSON line per request.
/// Standard error goes to a log file. Killed and reaped when this object goes away.
public final class LineChild: Sendable {
    private struct IO {
        var buffer: [UInt8] = []
        var ended = false
    }

    public let pid: pid_t
    private let input: Int32
    private let output: Int32
    private let io = Mutex(IO())
    private let exited = Mutex(false)

    public init(_ executable: String, _ arguments: [String], environment: [String: String], log: String) throws {
        var inputPair: [Int32] = [-1, -1]
        var outputPair: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &inputPair) == 0, socketpair(AF_UNIX, type, 0, &outputPair) == 0 else {
            throw Spawned.Failure("socketpair: errno \(errno)")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inputPair[1], 0)
        posix_spawn_file_actions_adddup2(&actions, outputPair[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGPIPE, SIGCHLD, SIGHUP] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        close(inputPair[1])
        close(outputPair[1])
        guard result == 0 else {
            close(inputPair[0]); close(outputPair[0])
            throw Spawned.Failure("posix_spawn \(executable): errno \(result)")
        }
        self.pid = pid
        input = inputPair[0]
        output = outputPair[0]
        signal(SIGPIPE, SIG_IGN)
    }

    deinit {
        shutdown(input, Int32(SHUT_WR))
        if !waitForExit(timeout: .seconds(5)) {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        close(input)
        close(output)
    }

    /// Waits up to `timeout` for the child to exit.
    @discardableResult
    public func waitForExit(timeout: Duration) -> Bool {
        exited.withLock { exited in
            if exited { return true }
            let deadline = ContinuousClock.now + timeout
            var status: Int32 = 0
            while ContinuousClock.now < deadline {
                let result = waitpid(pid, &status, WNOHANG)
                if result == pid || result < 0 { exited = true; return true }
                usleep(5_000)
            }
            return false
        }
    }

    public func send(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
            if n <= 0 { return }
            offset += n
        }
    }

    /// The next line, waiting up to `timeout`; `nil` on timeout or end of output.
    public func readLine(timeout: Duration) -> String? {
        io.withLock { io in
            let deadline = ContinuousClock.now + timeout
            while true {
                if let newline = io.buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: io.buffer[..<newline], as: UTF8.self)
                    io.buffer.removeSubrange(...newline)
                    return line
                }
                if io.ended { return nil }
                let remaining = deadline - ContinuousClock.now
                if remaining <= .zero { return nil }
                var descriptor = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
                let ready = poll(&descriptor, 1, 50)
                if ready <= 0 { continue }
                var chunk = [UInt8](repeating: 0, count: 4096)
                let n = read(output, &chunk, chunk.count)
                if n > 0 { io.buffer += chunk[0..<n] } else if n == 0 || errno != EINTR { io.ended = true }
            }
        }
    }

    /// Sends `request` and returns the answer line.
    public func request(_ request: String, timeout: Duration = .seconds(20)) throws -> String {
        send(request)
        guard let line = readLine(timeout: timeout) else { throw Spawned.Failure("no answer to \(request)") }
        return line
    }
}
