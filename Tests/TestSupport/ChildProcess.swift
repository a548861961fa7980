import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A child process driven over its standard input and output, read line by line (test beds that
/// answer one JSON line per request, the power-source probe, `notifywatch` itself). For
/// processes whose output only goes to a log, see `Spawned`.
///
/// Both are `AF_UNIX` stream socket pairs made with `SOCK_CLOEXEC`, so no other child that a
/// parallel test spawns inherits our ends (which would keep the child from seeing end of input).
/// Standard error is inherited, so whatever the child complains about shows in the test log,
/// unless it is appended to a file (`standardError`) for the test to read. The child is killed
/// (and reaped) when this object goes away, unless it has exited by then.
public final class ChildProcess: Sendable {
    private struct Output {
        var buffer: [UInt8] = []
        var ended = false
    }

    /// The child's process ID.
    public let pid: pid_t
    /// The program that was started.
    public let executable: String
    private let input: Int32
    private let output: Int32
    private let received = Mutex(Output())
    private let exitStatus = Mutex<Int32?>(nil)

    /// Starts `executable` with `arguments` and the environment `environment` (complete, not merged).
    /// The child's standard error is appended to the file at `standardError` (created if missing)
    /// when one is given, and is inherited otherwise.
    public init(executable: String, arguments: [String], environment: [String: String], standardError: String? = nil) throws {
        self.executable = executable
        let inputPair = try socketPair()
        let outputPair: (ours: Int32, theirs: Int32)
        do {
            outputPair = try socketPair()
        } catch {
            close(inputPair.ours); close(inputPair.theirs)
            throw error
        }
        var descriptors: [Int32: ChildDescriptor] = [0: .copy(inputPair.theirs), 1: .copy(outputPair.theirs)]
        if let standardError { descriptors[2] = .append(standardError) }
        do {
            pid = try spawnChild(executable, arguments, environment: environment, descriptors: descriptors)
        } catch {
            for fd in [inputPair.ours, inputPair.theirs, outputPair.ours, outputPair.theirs] { close(fd) }
            throw error
        }
        close(inputPair.theirs)
        close(outputPair.theirs)
        input = inputPair.ours
        output = outputPair.ours
        // Writing to a child that died must fail with EPIPE, not kill the test process.
        signal(SIGPIPE, SIG_IGN)
    }

    deinit {
        if exitStatus.withLock({ $0 }) == nil {
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
        received.withLock { received in
            let deadline = ContinuousClock.now + timeout
            while true {
                if let newline = received.buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: received.buffer[..<newline], as: UTF8.self)
                    received.buffer.removeSubrange(...newline)
                    return line
                }
                if received.ended { return nil }
                let remaining = deadline - ContinuousClock.now
                if remaining <= .zero { return nil }
                let milliseconds = Int32(max(1, min(remaining.components.seconds * 1000 + 1, 60_000)))
                var descriptor = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
                if poll(&descriptor, 1, milliseconds) <= 0 { continue }  // timeout, or EINTR
                var chunk = [UInt8](repeating: 0, count: 8192)
                let n = read(output, &chunk, chunk.count)
                if n > 0 {
                    received.buffer += chunk[0..<n]
                } else if n == 0 || (errno != EINTR && errno != EAGAIN) {
                    received.ended = true
                }
            }
        }
    }

    /// Sends `request` and returns the answer line.
    /// - Throws: `HarnessError` when no line comes within `timeout`.
    public func request(_ request: String, timeout: Duration = .seconds(20)) throws -> String {
        send(request)
        guard let line = readLine(timeout: timeout) else { throw HarnessError("no answer to \(request)") }
        return line
    }

    /// Waits up to `timeout` for the child to exit; returns its wait status, or `nil` if it is
    /// still running (then it is killed when this object goes away).
    @discardableResult
    public func waitForExit(timeout: Duration) -> Int32? {
        exitStatus.withLock { exitStatus in
            if let exitStatus { return exitStatus }
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                var status: Int32 = 0
                let result = waitpid(pid, &status, WNOHANG)
                if result == pid || result < 0 {
                    exitStatus = result == pid ? status : -1
                    return exitStatus
                }
                usleep(5_000)
            }
            return nil
        }
    }
}

/// What a wait status says: the exit status of a child that exited, `nil` for one that a signal
/// ended (`WIFEXITED` and `WEXITSTATUS`, which Swift does not import).
public func exitStatus(ofWaitStatus status: Int32) -> Int32? {
    status & 0x7f == 0 ? (status >> 8) & 0xff : nil
}
