import Foundation
import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

// The real `notifywatch` binary run as a script would run it against real daemons: standard
// output read line by line (without blocking a thread of the test runner), standard error in a
// file, signals by `kill`, the process state from /proc, and a `--record` file that tells when
// notifywatch has seen something it does not print (while suspended).

/// How long to wait for something that should happen: generous, real daemons on slow CI.
let realPatience: Duration = .seconds(20)


/// The `type`s a line of `notifywatch --json` may have (specification: notifywatch output, "JSON lines").
let lineTypes: Set<String> = ["notification", "suspended", "resumed", "resync", "source"]

/// Whether `text` is one JSON object with a `t` number and a `type` that the specification knows,
/// checked with Foundation's parser (independent of the project's own).
func isContractLine(_ text: String) -> Bool {
    guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
          let type = object["type"] as? String, object["t"] is NSNumber
    else { return false }
    return lineTypes.contains(type)
}

/// The process state letter of `pid` from /proc (`S`, `R`, `T` for stopped, …), `nil` if gone.
func processState(_ pid: pid_t) -> String? {
    guard let stat = readFile("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return nil }
    return stat[stat.index(after: close)...].split(separator: " ").first.map(String.init)
}

/// `notifywatch ARGUMENTS --json --record FILE`, watching the real daemons.
///
/// It runs without `DBUS_SYSTEM_BUS_ADDRESS` and `DBUS_SESSION_BUS_ADDRESS`, so the buses it
/// reaches are the ones the arguments (`--system-bus`, `--session-bus`) name. Every line read is
/// checked to be a JSON line of the specification (an issue is recorded if not).
final class NotifyWatchRun {
    static let executable = Paths.executable("notifywatch")

    let process: ChildProcess
    let directory: String
    let recording: String
    /// Every line of standard output read so far.
    private(set) var lines: [String] = []

    init(_ arguments: [String], environment extra: [String: String?] = [:]) throws {
        directory = try makeTemporaryDirectory("notifywatch-real")
        recording = directory + "/recording.jsonl"
        var changes: [String: String?] = [
            "DBUS_SYSTEM_BUS_ADDRESS": nil, "DBUS_SESSION_BUS_ADDRESS": nil, "LD_PRELOAD": nil, "UMOCKDEV_DIR": nil,
            "NO_COLOR": nil,
        ]
        changes.merge(extra) { $1 }
        do {
            process = try ChildProcess(
                executable: Self.executable, arguments: arguments + ["--json", "--record", recording],
                environment: ChildProcess.environment(with: changes), standardError: .append(directory + "/stderr"))
        } catch {
            removeTree(directory)
            throw error
        }
    }

    deinit {
        if process.waitForExit(timeout: .milliseconds(1)) == nil {
            kill(process.pid, SIGKILL)
            process.waitForExit(timeout: realPatience)
        }
        removeTree(directory)
    }

    var pid: pid_t { process.pid }

    /// What it wrote to standard error so far.
    var standardError: String { readFile(directory + "/stderr") ?? "" }

    /// The next line, or `nil` when none comes within `timeout` (or output ended); polls
    /// without blocking the test runner's threads.
    private func readLine(timeout: Duration) async -> String? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let line = process.readLine(timeout: .milliseconds(2)) {
                lines.append(line)
                if !isContractLine(line) { Issue.record("not a JSON contract line: \(line)") }
                return line
            }
            if ContinuousClock.now >= deadline || process.waitForExit(timeout: .milliseconds(1)) != nil {
                // One last look: the process may have written its last lines and exited.
                if let line = process.readLine(timeout: .milliseconds(50)) {
                    lines.append(line)
                    if !isContractLine(line) { Issue.record("not a JSON contract line: \(line)") }
                    return line
                }
                return nil
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// The next line, parsed; records an issue if none comes in time.
    func next(timeout: Duration = realPatience, sourceLocation: SourceLocation = #_sourceLocation) async -> JSONValue? {
        guard let line = await readLine(timeout: timeout) else {
            Issue.record("no line within \(timeout); read so far: \(lines); stderr: \(standardError)", sourceLocation: sourceLocation)
            return nil
        }
        return try? JSONValue(parsing: line)
    }

    /// The next `count` lines, parsed (fewer if time runs out).
    func next(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) async -> [JSONValue] {
        var read: [JSONValue] = []
        while read.count < count, let line = await next(sourceLocation: sourceLocation) { read.append(line) }
        return read
    }

    /// Reads lines until one satisfies `predicate`; returns them all, that one last.
    func read(until predicate: (JSONValue) -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async -> [JSONValue] {
        var read: [JSONValue] = []
        while let line = await next(sourceLocation: sourceLocation) {
            read.append(line)
            if predicate(line) { break }
        }
        return read
    }

    /// The lines that arrive within `duration` (none, when the tests expect silence).
    func linesArriving(within duration: Duration) async -> [String] {
        var arrived: [String] = []
        let deadline = ContinuousClock.now + duration
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero, let line = await readLine(timeout: remaining) else { break }
            arrived.append(line)
        }
        return arrived
    }

    func signal(_ number: Int32) { kill(process.pid, number) }

    /// Sends `number` and reads the line it makes notifywatch print.
    func signal(_ number: Int32, expecting type: JSONValue, sourceLocation: SourceLocation = #_sourceLocation) async -> JSONValue? {
        signal(number)
        let line = await next(sourceLocation: sourceLocation)
        #expect(line?["type"] == type, sourceLocation: sourceLocation)
        return line
    }

    /// Polls the process state until `predicate` holds; returns the last state seen.
    @discardableResult
    func waitForState(_ predicate: (String) -> Bool) async -> String? {
        let deadline = ContinuousClock.now + realPatience
        var state = processState(process.pid)
        while let current = state, !predicate(current), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
            state = processState(process.pid)
        }
        return state
    }

    /// Sends `number` and waits for the process to end; returns its exit status (`nil` if a
    /// signal ended it or it did not end in time).
    func stop(with number: Int32, sourceLocation: SourceLocation = #_sourceLocation) async -> Int32? {
        signal(number)
        let deadline = ContinuousClock.now + realPatience
        while ContinuousClock.now < deadline {
            if let status = process.waitForExit(timeout: .milliseconds(1)) { return ChildProcess.exitStatus(ofWaitStatus: status) }
            try? await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("notifywatch did not exit", sourceLocation: sourceLocation)
        return nil
    }

    /// Every line up to the end of standard output (after the process ended).
    func rest() async -> [String] {
        var read: [String] = []
        while let line = await readLine(timeout: .seconds(2)) { read.append(line) }
        return read
    }

    /// The recording's lines (the header first), as written so far.
    var recordedLines: [String] {
        (readFile(recording) ?? "").split(separator: "\n").map(String.init)
    }

    /// The recording's records (not the header), parsed.
    var records: [JSONValue] {
        recordedLines.dropFirst().compactMap { try? JSONValue(parsing: $0) }
    }

    /// The recorded `event` records for `key`.
    func events(_ key: String) -> [JSONValue] {
        records.filter { $0["type"] == "event" && $0["key"] == .string(key) }
    }

    /// Waits until the recording holds `count` records that satisfy `predicate`: then the bus has
    /// seen them, whatever notifywatch printed.
    func waitUntilRecorded(
        _ count: Int, where predicate: (JSONValue) -> Bool, sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let deadline = ContinuousClock.now + realPatience
        while records.filter(predicate).count < count {
            guard ContinuousClock.now < deadline else {
                Issue.record("the recording never held \(count) such records: \(recordedLines)", sourceLocation: sourceLocation)
                return
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits until the recording holds `count` events for `key`.
    func waitUntilRecorded(_ count: Int, eventsFor key: String, sourceLocation: SourceLocation = #_sourceLocation) async {
        await waitUntilRecorded(count, where: { $0["type"] == "event" && $0["key"] == .string(key) }, sourceLocation: sourceLocation)
    }

    /// What was printed, without the `source` lines and the live-only `time`: what a replay of
    /// the recording must print.
    var replayableLines: [String] {
        lines.compactMap { line -> String? in
            guard case .object(var object)? = try? JSONValue(parsing: line), object["type"] != "source" else { return nil }
            object["time"] = nil
            return JSONValue.object(object).jsonText
        }
    }

    /// `notifywatch replay RECORDING --json`: its exit status and its lines (standard output
    /// and error together: anything on standard error shows as a line that should not be there).
    func replay() async throws -> (status: Int32?, lines: [String]) {
        let output = directory + "/replay.out"
        let replay = try ChildProcess(
            Self.executable, ["replay", recording, "--json"],
            environment: ChildProcess.environment(with: ["NO_COLOR": nil]), log: output)
        let status = await replay.exit(within: realPatience) ?? replay.terminate(signal: SIGKILL)
        let text = readFile(output) ?? ""
        return (status.flatMap(ChildProcess.exitStatus(ofWaitStatus:)), text.split(separator: "\n").map(String.init))
    }
}
