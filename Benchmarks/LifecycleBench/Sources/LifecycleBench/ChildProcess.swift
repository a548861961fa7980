import BenchDBus
#if canImport(Glibc)
import Glibc
#endif

/// A process the benchmark started: its standard input and output are pipes to this process
/// (lines both ways), its standard error goes to a file. Terminated (SIGTERM) and reaped on
/// `terminate()` or release.
final class ChildProcess {
    let pid: pid_t
    let name: String
    private var input: Int32
    private let output: Int32
    private var buffer: [UInt8] = []
    private var reaped = false

    /// Starts `arguments` (the first an absolute path) with `environment` added to this one's.
    init(_ arguments: [String], environment: [String: String] = [:], standardError: String) throws(BenchError) {
        var toChild: [Int32] = [-1, -1]
        var fromChild: [Int32] = [-1, -1]
        guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else {
            throw BenchError("pipe: \(String(cString: strerror(errno)))")
        }
        for descriptor in toChild + fromChild { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, standardError, O_WRONLY | O_CREAT | O_APPEND, 0o644)

        var merged: [String: String] = [:]
        var index = 0
        while let entry = environ[index] {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") { merged[String(text[..<equals])] = String(text[text.index(after: equals)...]) }
            index += 1
        }
        merged.merge(environment) { _, new in new }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, arguments[0], &actions, nil, argv, envp)
        close(toChild[0])
        close(fromChild[1])
        guard status == 0 else {
            close(toChild[1])
            close(fromChild[0])
            throw BenchError("cannot start \(arguments[0]): \(String(cString: strerror(status)))")
        }
        self.pid = pid
        self.name = arguments[0].split(separator: "/").last.map(String.init) ?? arguments[0]
        input = toChild[1]
        output = fromChild[0]
    }

    deinit { terminate() }

    /// The output's descriptor, to `poll` several children at once.
    var outputDescriptor: Int32 { output }

    /// Writes `line` and a newline to its standard input.
    func send(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
    }

    /// The next line of its standard output, waiting at most about `timeoutMilliseconds`; `nil`
    /// at the end of its output or on timeout. `meanwhile` runs about every 10 ms while it waits.
    /// The wait is counted in idle polls of 10 ms, not read from a clock.
    func readLine(timeoutMilliseconds: Int = 20_000, meanwhile: () -> Void = {}) -> String? {
        var waited = 0
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            if waited >= timeoutMilliseconds { return nil }
            var descriptor = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, 10) > 0 {
                guard fill() else { return nil }
            } else {
                waited += 10
                meanwhile()
            }
        }
    }

    /// Reads what the pipe has now; `false` at its end.
    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
        guard count > 0 else { return count < 0 && errno == EINTR }
        buffer.append(contentsOf: chunk[..<count])
        return true
    }

    /// Sends `signal` (once) and reaps it.
    func terminate(signal: Int32 = SIGTERM) {
        guard !reaped else { return }
        reaped = true
        if input >= 0 {
            close(input)
            input = -1
        }
        kill(pid, signal)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        close(output)
    }
}
