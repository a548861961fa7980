#if canImport(Glibc)
import Glibc
#endif

/// A companion of a test or a benchmark (a daemon, a compositor, a tool) that did not behave, or
/// could not be started.
public struct HarnessError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

extension ChildProcess {
    /// Starts `executable` with `arguments` in `environment` (complete), for daemons and tools the
    /// tests run but do not talk to over standard input and output: standard output and error
    /// appended to `log`, standard input from /dev/null; `extraDescriptors` maps child fd → our fd.
    public convenience init(
        _ executable: String, _ arguments: [String], environment: [String: String], log: String,
        extraDescriptors: [Int32: Int32] = [:]
    ) throws {
        try self.init(
            executable: executable, arguments: arguments, environment: environment,
            standardInput: .nullDevice, standardOutput: .append(log), standardError: .standardOutput, descriptors: extraDescriptors)
    }

    /// Starts `executable` (output to `log`, as above) with a socket as its descriptor
    /// `reportDescriptor` (e.g. for `--print-address=3` or `-displayfd 3`) and waits up to
    /// `timeout` for the line it reports there; our end is closed only after that (closing it
    /// earlier can make the child die).
    /// - Returns: the process and the line, without its newline.
    public static func start(
        _ executable: String, _ arguments: [String], environment: [String: String], log: String,
        reportingOn reportDescriptor: Int32, timeout: Duration
    ) throws -> (process: ChildProcess, line: String) {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw HarnessError("socketpair: errno \(errno)")
        }
        let (ours, theirs) = (pair[0], pair[1])
        defer { close(ours) }
        let process: ChildProcess
        do {
            process = try ChildProcess(executable, arguments, environment: environment, log: log, extraDescriptors: [reportDescriptor: theirs])
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

    /// Sends `request` to a child that answers one line per line (test beds, proxies) and returns
    /// the answer.
    /// - Throws: `HarnessError` when no line comes within `timeout`.
    public func request(_ request: String, timeout: Duration = .seconds(20)) throws -> String {
        send(request)
        guard let line = readLine(timeout: timeout) else { throw HarnessError("no answer to \(request)") }
        return line
    }
}

/// Runs `executable` to its end (SIGKILL after `timeout`) and returns what it printed (standard
/// output and error); throws when it exits with another status than 0.
public func runCommand(
    _ executable: String, _ arguments: [String], environment: [String: String], timeout: Duration = .seconds(30)
) async throws -> String {
    let (status, output) = try await runCommandToEnd(executable, arguments, environment: environment, timeout: timeout)
    guard status == 0 else {
        throw HarnessError("\(([executable] + arguments).joined(separator: " ")) exited with wait status \(status ?? -1): \(output)")
    }
    return output
}

/// Runs `executable` to its end (SIGKILL after `timeout`) and returns its wait status (`nil` if it
/// could not be reaped) and what it printed (standard output and error), whatever the status.
public func runCommandToEnd(
    _ executable: String, _ arguments: [String], environment: [String: String], timeout: Duration = .seconds(30)
) async throws -> (waitStatus: Int32?, output: String) {
    let log = try makeTemporaryFile("notifybus-command")
    defer { unlink(log) }
    let process = try ChildProcess(executable, arguments, environment: environment, log: log)
    let status = await process.exit(within: timeout) ?? process.terminate(signal: SIGKILL)
    return (status, readFile(log) ?? "")
}
