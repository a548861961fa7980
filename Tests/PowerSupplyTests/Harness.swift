import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension Paths {
    /// The PowerSupplyProbe executable, built beside the test bundle by `swift build`/`swift test`.
    static let probe = Paths.executable("PowerSupplyProbe")
}

/// A notification line of the probe.
struct Note: Equatable, CustomStringConvertible {
    var key: String
    var value: JSONValue
    var coalesced: Int
    var previous: JSONValue?
    var kind: String

    init(_ key: String, _ value: JSONValue, coalesced: Int = 1, previous: JSONValue? = nil, kind: String = "live") {
        self.key = key
        self.value = value
        self.coalesced = coalesced
        self.previous = previous
        self.kind = kind
    }

    init?(_ line: JSONValue) {
        guard line["type"] == "notification", let key = line["key"]?.stringValue, let value = line["value"],
              let coalesced = line["coalesced"]?.doubleValue, let kind = line["kind"]?.stringValue
        else { return nil }
        self.init(key, value, coalesced: Int(coalesced), previous: line["previous"], kind: kind)
    }

    var description: String {
        "\(key)=\(value) ×\(coalesced)\(previous.map { " (was \($0))" } ?? "") \(kind)"
    }
}

/// PowerSupplyProbe (a PowerSupplySource and one subscriber) running under umockdev's preload
/// against a test bed, talked to over its standard input and output.
final class Probe {
    let process: ChildProcess
    /// The file that takes the probe's standard error: what the source logs.
    let standardError: String
    /// Every line read so far, but the `reported` ones.
    private(set) var lines: [JSONValue] = []
    /// The `reported` lines read so far: each status change as the source made it, with the
    /// bus's store at that moment. Kept apart: they come in no fixed order with the `source` lines.
    private(set) var reported: [JSONValue] = []

    init(testbed: Testbed, arguments: [String] = [], environment extra: [String: String?] = [:]) throws {
        standardError = try makeTemporaryFile("probe-stderr")
        var changes: [String: String?] = ["LD_PRELOAD": Paths.preload, "UMOCKDEV_DIR": testbed.root]
        changes.merge(extra) { $1 }
        process = try ChildProcess(
            executable: Paths.probe, arguments: arguments, environment: ChildProcess.environment(with: changes),
            standardError: .append(standardError))
    }

    deinit {
        process.send("quit")
        process.closeInput()
        if process.waitForExit(timeout: .seconds(5)) == nil { kill(process.pid, SIGKILL) }
        unlink(standardError)
    }

    /// The lines the source logged (warnings and worse) so far: each has been written by the
    /// time a later notification or acknowledgement is read.
    var logged: [String] {
        (readFile(standardError) ?? "").split(separator: "\n").map(String.init).filter { $0.contains("warning") }
    }

    /// Asks the probe to quit (it cancels the source's task and shuts its loop down) and
    /// returns its wait status (0: exited with status 0), or `nil` if it did not exit in time.
    func quit() -> Int32? {
        command("quit")
        process.closeInput()
        return process.waitForExit(timeout: .seconds(5))
    }

    /// Reads lines until one satisfies `predicate`; returns every line read, that one last.
    /// Records an issue (and returns what it read) if none comes within `timeout`.
    @discardableResult
    func read(
        until predicate: (JSONValue) -> Bool, timeout: Duration = patience,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> [JSONValue] {
        var read: [JSONValue] = []
        let deadline = ContinuousClock.now + timeout
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero, let text = process.readLine(timeout: remaining) else {
                Issue.record("timed out; read \(read.map(\.jsonText))", sourceLocation: sourceLocation)
                return read
            }
            guard let line = try? JSONValue(parsing: text) else {
                Issue.record("not JSON: \(text)", sourceLocation: sourceLocation)
                continue
            }
            if line["type"] == "reported" {
                reported.append(line)
                if predicate(line) { return read + [line] }
                continue
            }
            lines.append(line)
            read.append(line)
            if predicate(line) { return read }
        }
    }

    /// The bus's store when the source first reported `status` (reading on until it did): what
    /// a subscriber that starts then gets as its initial values.
    func storeWhenFirst(_ status: String, sourceLocation: SourceLocation = #_sourceLocation) -> JSONValue? {
        if let line = reported.first(where: { $0["status"] == .string(status) }) { return line["store"] }
        return read(until: { $0["type"] == "reported" && $0["status"] == .string(status) }, sourceLocation: sourceLocation)
            .last?["store"]
    }

    /// Waits for the source's first status line; returns it with the notifications before it
    /// (the initial values).
    func start(sourceLocation: SourceLocation = #_sourceLocation) -> (status: JSONValue?, notes: [Note]) {
        let read = read(until: { $0["type"] == "source" }, sourceLocation: sourceLocation)
        return (read.last.flatMap { $0["type"] == "source" ? $0 : nil }, read.compactMap(Note.init))
    }

    /// Sends `command` and returns the lines before its acknowledgement.
    @discardableResult
    func command(_ command: String, sourceLocation: SourceLocation = #_sourceLocation) -> [JSONValue] {
        process.send(command)
        let read = read(
            until: { $0["type"] == "ack" && $0["command"] == .string(command) }, sourceLocation: sourceLocation)
        return Array(read.dropLast())
    }

    /// Resumes the subscriber; returns the `resumed` line's `flushed` count and the flushed
    /// notifications after it (records an issue when the first line is not `resumed`).
    func resume(sourceLocation: SourceLocation = #_sourceLocation) -> (flushed: JSONValue?, notes: [Note]) {
        let lines = command("resume", sourceLocation: sourceLocation)
        #expect(lines.first?["type"] == "resumed", sourceLocation: sourceLocation)
        return (lines.first?["flushed"], lines.compactMap(Note.init))
    }

    /// The notifications that arrive before everything sent so far has been handled: a uevent
    /// already sent is handled before a `sync` acknowledgement (see the probe).
    func notesUntilSynced(sourceLocation: SourceLocation = #_sourceLocation) -> [Note] {
        command("sync", sourceLocation: sourceLocation).compactMap(Note.init)
    }

    /// Reads until `count` notifications arrived (or time runs out); returns them.
    func notes(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) -> [Note] {
        var notes: [Note] = []
        if count == 0 { return notes }
        read(until: { line in
            if let note = Note(line) { notes.append(note) }
            return notes.count >= count
        }, sourceLocation: sourceLocation)
        return notes
    }

    /// Reads until the source reports `status`; returns that line.
    @discardableResult
    func waitForStatus(_ status: String, sourceLocation: SourceLocation = #_sourceLocation) -> JSONValue? {
        read(until: { $0["type"] == "source" && $0["status"] == .string(status) }, sourceLocation: sourceLocation).last
    }
}
