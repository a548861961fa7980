import Synchronization

#if canImport(Glibc)
public import Glibc
#endif

/// A program this process started (with `posix_spawn`): its standard input, output and error
/// each a pipe to this process, this process's own, `/dev/null`, a file or a descriptor; read
/// line by line, written to, signalled, waited for. Only its own PID is ever signalled, and only
/// until it has been reaped.
///
/// Pipes are `AF_UNIX` stream socket pairs made with `SOCK_CLOEXEC`, so no other child (one a
/// parallel test or another thread starts) inherits this process's ends, which would keep the
/// child from seeing the end of its input. The child starts with a clean signal state, as from a
/// shell: nothing blocked (the threads of Swift's concurrency pool block every signal), and the
/// signals a test or benchmark may catch or ignore at their defaults. When it goes away, a child
/// that has not been reaped is killed (SIGKILL) and reaped.
public final class ChildProcess: Sendable {
    /// Where the child's standard input comes from.
    public enum Input: Sendable {
        /// A pipe from this process: `send(_:)` writes to it, `closeInput()` ends it.
        case pipe
        /// This process's standard input.
        case inherit
        /// `/dev/null`.
        case nullDevice
        /// The file at this path.
        case file(String)
        /// A copy of this process's descriptor.
        case descriptor(Int32)
    }

    /// Where the child's standard output or standard error goes.
    public enum Output: Sendable {
        /// A pipe to this process, read with `readLine(timeout:meanwhile:)` (standard output only).
        case pipe
        /// This process's own descriptor (its standard output, or its standard error).
        case inherit
        /// `/dev/null`.
        case nullDevice
        /// The file at this path, appended to (created if missing).
        case append(String)
        /// A copy of this process's descriptor.
        case descriptor(Int32)
        /// Wherever the child's standard output goes (standard error only: `2>&1`).
        case standardOutput
    }

    private struct Received {
        var buffer: [UInt8] = []
        var ended = false
    }

    private struct Reaped {
        var waitStatus: Int32
        var cpuTime: Duration?
    }

    /// The child's process ID.
    public let pid: pid_t
    /// The program that was started.
    public let executable: String
    /// Our end of the child's standard input, or -1.
    private let input: Int32
    /// Our end of the child's standard output, or -1.
    private let output: Int32
    private let received = Mutex(Received())
    private let reaped = Mutex<Reaped?>(nil)

    /// Starts `executable` (a path: no search of `PATH`) with `arguments` (the child's `argv[0]`
    /// is `executable`) in `environment` (complete, not merged; `nil`: this process's) and
    /// `workingDirectory` (`nil`: this process's). `descriptors` maps further descriptors of the
    /// child to descriptors of this process copied there (e.g. `[3: socket]` for a program that
    /// reports on descriptor 3). A pipe to the child's standard input makes this process ignore
    /// SIGPIPE, so writing to a child that died fails instead of ending this process.
    public init(
        executable: String, arguments: [String] = [], environment: [String: String]? = nil, workingDirectory: String? = nil,
        standardInput: Input = .pipe, standardOutput: Output = .pipe, standardError: Output = .inherit,
        descriptors: [Int32: Int32] = [:]
    ) throws(ChildProcessError) {
        if case .standardOutput = standardOutput { throw ChildProcessError("standard output cannot go to standard output") }
        if case .pipe = standardError { throw ChildProcessError("standard error cannot be a pipe; append it to a file") }
        self.executable = executable
        var opened: [Int32] = []
        func pair() throws(ChildProcessError) -> (ours: Int32, theirs: Int32) {
            let made = try socketPair()
            opened += [made.ours, made.theirs]
            return made
        }
        var actions: [Int32: SpawnAction] = [:]
        var ourInput: Int32 = -1, ourOutput: Int32 = -1
        do {
            switch standardInput {
            case .pipe:
                let made = try pair()
                ourInput = made.ours
                actions[0] = .copy(made.theirs)
            case .inherit: break
            case .nullDevice: actions[0] = .open("/dev/null", O_RDONLY)
            case .file(let path): actions[0] = .open(path, O_RDONLY)
            case .descriptor(let ours): actions[0] = .copy(ours)
            }
            for (child, destination) in [(Int32(1), standardOutput), (2, standardError)] {
                switch destination {
                case .pipe:
                    let made = try pair()
                    ourOutput = made.ours
                    actions[child] = .copy(made.theirs)
                case .inherit: break
                case .nullDevice: actions[child] = .open("/dev/null", O_WRONLY)
                case .append(let path): actions[child] = .open(path, O_WRONLY | O_CREAT | O_APPEND)
                case .descriptor(let ours): actions[child] = .copy(ours)
                // Set up after standard output (in ascending order), so this copies the child's.
                case .standardOutput: actions[child] = .copy(1)
                }
            }
            for (child, ours) in descriptors { actions[child] = .copy(ours) }
            pid = try spawn(
                executable, arguments, environment: environment, workingDirectory: workingDirectory, actions: actions)
        } catch {
            for descriptor in opened { close(descriptor) }
            throw error
        }
        // The child has its copies; this process keeps only its own ends.
        for descriptor in opened where descriptor != ourInput && descriptor != ourOutput { close(descriptor) }
        input = ourInput
        output = ourOutput
        if input >= 0 { Glibc.signal(SIGPIPE, SIG_IGN) }
    }

    deinit {
        reaped.withLock { reaped in
            guard reaped == nil else { return }
            kill(pid, SIGKILL)
            reaped = Self.reap(pid, blocking: true)
        }
        if input >= 0 { close(input) }
        if output >= 0 { close(output) }
    }

    // MARK: Standard input and output

    /// Writes `line` and a newline to the child's standard input (a pipe); `false` if it could
    /// not all be written (the child closed it or died, or the input is not a pipe).
    @discardableResult
    public func send(_ line: String) -> Bool {
        guard input >= 0 else { return false }
        let bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }

    /// Ends the child's standard input (a pipe): it reads end of input.
    public func closeInput() {
        if input >= 0 { shutdown(input, Int32(SHUT_WR)) }
    }

    /// The next line of the child's standard output (a pipe), without its newline, waiting up
    /// to `timeout`; `nil` on timeout or at the end of its output. `meanwhile`, when given, runs
    /// about every 10 ms while nothing arrives (e.g. to serve a D-Bus connection the child
    /// waits on); it must not read from this child.
    public func readLine(timeout: Duration, meanwhile: (() -> Void)? = nil) -> String? {
        guard output >= 0 else { return nil }
        return received.withLock { received in
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
                let (seconds, attoseconds) = remaining.components
                var milliseconds = Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
                if meanwhile != nil { milliseconds = min(milliseconds, 10) }
                var descriptor = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
                let ready = poll(&descriptor, 1, max(1, milliseconds))
                if ready == 0 { meanwhile?() }
                if ready <= 0 { continue }  // timeout, or EINTR
                var chunk = [UInt8](repeating: 0, count: 8192)
                let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
                if count > 0 {
                    received.buffer += chunk[0..<count]
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    received.ended = true
                }
            }
        }
    }

    // MARK: Exit

    /// The child's wait status once it has exited (reaping it then); `nil` while it runs. -1 if
    /// it was reaped elsewhere. `exitStatus(ofWaitStatus:)` reads it.
    public var waitStatus: Int32? {
        reaped.withLock { reaped in
            if reaped == nil { reaped = Self.reap(pid, blocking: false) }
            return reaped?.waitStatus
        }
    }

    /// Whether the child has exited (reaping it then).
    public var hasExited: Bool { waitStatus != nil }

    /// The processor time (user and system) the child and the children it reaped used, once it
    /// has been reaped here; `nil` before.
    public var cpuTime: Duration? { reaped.withLock { $0?.cpuTime } }

    /// Waits up to `timeout` for the child to exit by itself, blocking this thread; returns its
    /// wait status, or `nil` if it still runs.
    @discardableResult
    public func waitForExit(timeout: Duration) -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let status = waitStatus { return status }
            if ContinuousClock.now >= deadline { return nil }
            usleep(5_000)
        }
    }

    /// Waits up to `timeout` for the child to exit by itself, without blocking a thread; returns
    /// its wait status, or `nil` if it still runs.
    public func exit(within timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let status = waitStatus { return status }
            if ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Sends `signal` to the child unless it has been reaped; whether it was sent.
    @discardableResult
    public func signal(_ signal: Int32) -> Bool {
        reaped.withLock { reaped in reaped == nil && kill(pid, signal) == 0 }
    }

    /// Ends the child's standard input (a pipe), sends `signal` (0: none, only waiting) unless it
    /// has exited, and waits up to `timeout` for it to exit; SIGKILL after that. Returns its wait
    /// status (-1 if it was reaped elsewhere).
    @discardableResult
    public func terminate(signal: Int32 = SIGTERM, timeout: Duration = .seconds(5)) -> Int32? {
        closeInput()
        return reaped.withLock { reaped -> Int32? in
            if let reaped { return reaped.waitStatus }
            if signal != 0 { kill(pid, signal) }
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if let done = Self.reap(pid, blocking: false) {
                    reaped = done
                    return done.waitStatus
                }
                usleep(2_000)
            }
            kill(pid, SIGKILL)
            let done = Self.reap(pid, blocking: true)
            reaped = done
            return done?.waitStatus
        }
    }

    /// What a wait status says: the exit status of a child that exited, `nil` for one that a
    /// signal ended (`WIFEXITED` and `WEXITSTATUS`, which Swift does not import).
    public static func exitStatus(ofWaitStatus status: Int32) -> Int32? {
        status & 0x7f == 0 ? (status >> 8) & 0xff : nil
    }

    /// Reaps `pid` if it has exited (or, `blocking`, once it has): its wait status and processor
    /// time; a wait status of -1 when it is not this process's child any more (reaped elsewhere).
    private static func reap(_ pid: pid_t, blocking: Bool) -> Reaped? {
        var status: Int32 = 0
        var usage = rusage()
        while true {
            let result = wait4(pid, &status, blocking ? 0 : WNOHANG, &usage)
            if result == pid {
                let microseconds = (Int64(usage.ru_utime.tv_sec) + Int64(usage.ru_stime.tv_sec)) * 1_000_000
                    + Int64(usage.ru_utime.tv_usec) + Int64(usage.ru_stime.tv_usec)
                return Reaped(waitStatus: status, cpuTime: .microseconds(microseconds))
            }
            if result == 0 { return nil }
            if errno == EINTR { continue }
            return Reaped(waitStatus: -1, cpuTime: nil)
        }
    }

    // MARK: Environment

    /// This process's environment with `changes` applied (`nil` removes a variable).
    public static func environment(with changes: [String: String?] = [:]) -> [String: String] {
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
}

/// A child process that could not be started.
public struct ChildProcessError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
