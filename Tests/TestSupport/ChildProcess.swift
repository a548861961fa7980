import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A child process with its standard input and output connected to us, read line by line.
///
/// Both are `AF_UNIX` stream socket pairs made with `SOCK_CLOEXEC`, so no other child that a
/// parallel test spawns inherits our ends (which would keep the child from seeing end of input).
/// Standard error is inherited, so whatever the child complains about shows in the test log,
/// unless it is sent to a file (`standardError`) for the test to read.
public final class ChildProcess {
    /// Why a child could not be started.
    public struct SpawnError: Error, CustomStringConvertible {
        public var description: String
    }

    /// The child's process ID.
    public let pid: pid_t
    /// The program that was started.
    public let executable: String
    private let input: Int32
    private let output: Int32
    private var buffer: [UInt8] = []
    private var endOfOutput = false
    private var exitStatus: Int32?

    /// Starts `executable` with `arguments` and the environment `environment` (complete, not merged).
    /// The child's standard error goes to the file at `standardError` (created or truncated) when
    /// one is given, and is inherited otherwise.
    public init(executable: String, arguments: [String], environment: [String: String], standardError: String? = nil) throws {
        self.executable = executable
        var inputPair: [Int32] = [-1, -1]
        var outputPair: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &inputPair) == 0 else {
            throw SpawnError(description: "socketpair: errno \(errno)")
        }
        guard socketpair(AF_UNIX, type, 0, &outputPair) == 0 else {
            close(inputPair[0]); close(inputPair[1])
            throw SpawnError(description: "socketpair: errno \(errno)")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears close-on-exec on the copies the child keeps.
        posix_spawn_file_actions_adddup2(&actions, inputPair[1], 0)
        posix_spawn_file_actions_adddup2(&actions, outputPair[1], 1)
        if let standardError {
            posix_spawn_file_actions_addopen(&actions, 2, standardError, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        }

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        close(inputPair[1])
        close(outputPair[1])
        guard result == 0 else {
            close(inputPair[0]); close(outputPair[0])
            throw SpawnError(description: "posix_spawn \(executable): errno \(result)")
        }
        self.pid = pid
        self.input = inputPair[0]
        self.output = outputPair[0]
        // Writing to a child that died must fail with EPIPE, not kill the test process.
        signal(SIGPIPE, SIG_IGN)
    }

    deinit {
        if exitStatus == nil {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        close(input)
        close(output)
    }

    /// Writes `line` and a newline to the child's standard input.
    public func send(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
            if n <= 0 { return }
            offset += n
        }
    }

    /// Closes the child's standard input (it sees end of input).
    public func closeInput() { shutdown(input, Int32(SHUT_WR)) }

    /// The next line of output, waiting up to `timeout`; `nil` on timeout or end of output.
    public func readLine(timeout: Duration) -> String? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            if endOfOutput { return nil }
            let remaining = deadline - ContinuousClock.now
            if remaining <= .zero { return nil }
            let milliseconds = Int32(max(1, min(remaining.components.seconds * 1000 + 1, 60_000)))
            var descriptor = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            if ready <= 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 8192)
            let n = read(output, &chunk, chunk.count)
            if n > 0 {
                buffer += chunk[0..<n]
            } else if n == 0 || (errno != EINTR && errno != EAGAIN) {
                endOfOutput = true
            }
        }
    }

    /// Waits up to `timeout` for the child to exit; returns its wait status, or `nil` if it is
    /// still running (then it is killed when this object goes away).
    @discardableResult
    public func waitForExit(timeout: Duration) -> Int32? {
        if let exitStatus { return exitStatus }
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                exitStatus = status
                return status
            }
            usleep(5_000)
        }
        return nil
    }
}

/// What a wait status says: the exit status of a child that exited, `nil` for one that a signal
/// ended (`WIFEXITED` and `WEXITSTATUS`, which Swift does not import).
public func exitStatus(ofWaitStatus status: Int32) -> Int32? {
    status & 0x7f == 0 ? (status >> 8) & 0xff : nil
}
