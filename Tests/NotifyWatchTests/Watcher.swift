import Foundation
import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The `notifywatch` executable, built beside the test bundle.
let notifywatch = Paths.executable("notifywatch")

/// The `type`s a line of `notifywatch --json` may have (specification: notifywatch output, "JSON lines").
let lineTypes: Set<String> = ["notification", "suspended", "resumed", "resync", "source"]

extension Testbed {
    /// A laptop on battery: BAT0 discharging at 80 %, the AC adapter offline.
    static func laptop() throws -> Testbed {
        let testbed = try Testbed()
        try testbed.plug("BAT0", ["type": "Battery", "status": "Discharging", "capacity": "80", "present": "1"])
        try testbed.plug("AC", ["type": "Mains", "online": "0"])
        return testbed
    }

    /// Adds a device as the kernel describes it: its attributes, the same as `POWER_SUPPLY_*`
    /// properties, and `POWER_SUPPLY_NAME`.
    func plug(_ name: String, _ values: [String: String]) throws {
        var properties = ["POWER_SUPPLY_NAME": name]
        for (attribute, value) in values { properties["POWER_SUPPLY_" + attribute.uppercased()] = value }
        try add(name, attributes: values, properties: properties)
    }
}


/// The current values of the laptop, as `notifywatch` prints them first.
let laptopInitialNotes: Set<Note> = [
    Note("battery/BAT0/state", "unplugged", coalesced: 0),
    Note("battery/BAT0/level", 0.8, coalesced: 0),
    Note("power/AC/online", false, coalesced: 0),
]

/// Whether `text` is one JSON object with a string `type` that the specification knows, checked
/// with Foundation's parser (independent of the project's own).
func isContractLine(_ text: String) -> Bool {
    guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
          let type = object["type"] as? String
    else { return false }
    return lineTypes.contains(type)
}

/// A scratch directory, removed by `remove()`.
func makeScratchDirectory() -> String {
    var template = Array((NSTemporaryDirectory() + "/notifywatch-tests.XXXXXX").utf8CString)
    guard let path = mkdtemp(&template) else { fatalError("mkdtemp: errno \(errno)") }
    return String(cString: path)
}

/// The process state letter of `pid` from /proc (`S`, `R`, `T` for stopped, …), `nil` if gone.
func processState(_ pid: pid_t) -> String? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")")
    else { return nil }
    return stat[stat.index(after: close)...].split(separator: " ").first.map(String.init)
}

/// The real `notifywatch` watching a umockdev test bed (or the bare machine), run as a script
/// would: its standard output read line by line, its standard error in a file, signals by `kill`.
///
/// With `json`, every line read is checked to be a line of the specification (an issue is recorded if not).
/// With `record`, it records to a file in its scratch directory, which the tests also use to know
/// what the bus has seen (the recording is written line by line as things happen).
final class Watcher {
    let process: ChildProcess
    let json: Bool
    let directory: String
    /// The `--record` file, if recording.
    let recording: String?
    /// Every line of standard output read so far.
    private(set) var lines: [String] = []

    /// Starts `notifywatch arguments` (plus `--json` and `--record FILE` as asked) against
    /// `testbed` (under umockdev's preload), or the bare machine when it is `nil`, with
    /// `environment` changed as given.
    init(
        _ arguments: [String] = [], testbed: Testbed?, json: Bool = true, record: Bool = true,
        environment extra: [String: String?] = [:]
    ) throws {
        self.json = json
        directory = makeScratchDirectory()
        recording = record ? directory + "/recording.jsonl" : nil
        var all = arguments
        // The umockdev sandbox has power supplies only: watch just them unless the test chooses.
        let watching = !["sources", "replay", "help", "watch"].contains(arguments.first ?? "")
        if watching, !arguments.contains(where: { $0 == "--source" || $0 == "--no-source" }) {
            all += ["--source", "power"]
        }
        if json { all.append("--json") }
        if let recording { all += ["--record", recording] }
        var changes: [String: String?] = [
            "LD_PRELOAD": testbed == nil ? nil : Paths.preload, "UMOCKDEV_DIR": testbed?.root, "NO_COLOR": nil,
        ]
        changes.merge(extra) { $1 }
        process = try ChildProcess(
            executable: notifywatch, arguments: all, environment: ChildProcess.environment(with: changes),
            standardError: .append(directory + "/stderr"))
    }

    deinit {
        if process.waitForExit(timeout: .milliseconds(1)) == nil {
            kill(process.pid, SIGKILL)
            process.waitForExit(timeout: patience)
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    var pid: pid_t { process.pid }

    /// What it wrote to standard error so far.
    var standardError: String {
        (try? String(contentsOfFile: directory + "/stderr", encoding: .utf8)) ?? ""
    }

    /// The next line of standard output; records an issue if none comes within `timeout`.
    func nextLine(timeout: Duration = patience, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        guard let line = process.readLine(timeout: timeout) else {
            Issue.record("no line within \(timeout); read so far: \(lines)", sourceLocation: sourceLocation)
            return nil
        }
        accept(line, sourceLocation: sourceLocation)
        return line
    }

    private func accept(_ line: String, sourceLocation: SourceLocation) {
        lines.append(line)
        if json && !isContractLine(line) {
            Issue.record("not a JSON object with a known type: \(line)", sourceLocation: sourceLocation)
        }
    }

    /// The next line, parsed.
    func next(sourceLocation: SourceLocation = #_sourceLocation) -> JSONValue? {
        guard let line = nextLine(sourceLocation: sourceLocation) else { return nil }
        return try? JSONValue(parsing: line)
    }

    /// The next `count` lines, parsed (fewer if time runs out).
    func next(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) -> [JSONValue] {
        var read: [JSONValue] = []
        while read.count < count, let line = next(sourceLocation: sourceLocation) { read.append(line) }
        return read
    }

    /// Reads lines until one satisfies `predicate`; returns them all, that one last.
    func read(until predicate: (JSONValue) -> Bool, sourceLocation: SourceLocation = #_sourceLocation) -> [JSONValue] {
        var read: [JSONValue] = []
        while let line = next(sourceLocation: sourceLocation) {
            read.append(line)
            if predicate(line) { break }
        }
        return read
    }

    /// The lines that arrive within `duration` (none, when the tests expect silence).
    func linesArriving(within duration: Duration) -> [String] {
        var arrived: [String] = []
        let deadline = ContinuousClock.now + duration
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero, let line = process.readLine(timeout: remaining) else { break }
            accept(line, sourceLocation: #_sourceLocation)
            arrived.append(line)
        }
        return arrived
    }

    /// Every line up to the end of standard output (after the process ended).
    func rest(sourceLocation: SourceLocation = #_sourceLocation) -> [String] {
        var read: [String] = []
        while let line = process.readLine(timeout: patience) {
            accept(line, sourceLocation: sourceLocation)
            read.append(line)
        }
        return read
    }

    /// Waits for the `source` line and the `initial` current values after it.
    @discardableResult
    func start(initial: Int, sourceLocation: SourceLocation = #_sourceLocation) -> (source: JSONValue?, notes: [Note]) {
        let source = next(sourceLocation: sourceLocation)
        #expect(source?["type"] == "source", sourceLocation: sourceLocation)
        let notes = next(initial, sourceLocation: sourceLocation).compactMap(Note.init)
        #expect(notes.count == initial, sourceLocation: sourceLocation)
        return (source, notes)
    }

    func signal(_ number: Int32) {
        kill(process.pid, number)
    }

    /// Sends `number` and reads the line it makes notifywatch print.
    func signal(_ number: Int32, expecting type: JSONValue, sourceLocation: SourceLocation = #_sourceLocation) -> JSONValue? {
        signal(number)
        let line = next(sourceLocation: sourceLocation)
        #expect(line?["type"] == type, sourceLocation: sourceLocation)
        return line
    }

    /// Polls the process state until `predicate` holds; returns the last state seen.
    @discardableResult
    func waitForState(_ predicate: (String) -> Bool, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        let deadline = ContinuousClock.now + patience
        var state = processState(process.pid)
        while let current = state, !predicate(current), ContinuousClock.now < deadline {
            usleep(5_000)
            state = processState(process.pid)
        }
        return state
    }

    /// Sends `number` and waits for the process to end; returns its exit status (`nil` if a
    /// signal ended it or it did not end in time).
    func stop(with number: Int32, sourceLocation: SourceLocation = #_sourceLocation) -> Int32? {
        signal(number)
        return waitForExitStatus(sourceLocation: sourceLocation)
    }

    func waitForExitStatus(sourceLocation: SourceLocation = #_sourceLocation) -> Int32? {
        guard let status = process.waitForExit(timeout: patience) else {
            Issue.record("notifywatch did not exit", sourceLocation: sourceLocation)
            return nil
        }
        return ChildProcess.exitStatus(ofWaitStatus: status)
    }

    /// The recording's lines (the header first), as written so far.
    var recordedLines: [String] {
        guard let recording, let text = try? String(contentsOfFile: recording, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").map(String.init)
    }

    /// The recording's records (not the header), parsed.
    var records: [JSONValue] {
        recordedLines.dropFirst().compactMap { try? JSONValue(parsing: $0) }
    }

    /// Waits until the recording holds `count` records of `type` (`event`, `subscribe`, …):
    /// then the bus has seen them, whatever the watcher printed.
    func waitUntilRecorded(_ count: Int, _ type: JSONValue = "event", sourceLocation: SourceLocation = #_sourceLocation) {
        let deadline = ContinuousClock.now + patience
        while records.filter({ $0["type"] == type }).count < count {
            guard ContinuousClock.now < deadline else {
                Issue.record("the recording never held \(count) \(type) records: \(recordedLines)", sourceLocation: sourceLocation)
                return
            }
            usleep(10_000)
        }
    }

    /// Waits until standard error contains `text`; returns whether it did.
    @discardableResult
    func waitForStandardError(containing text: String, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let deadline = ContinuousClock.now + patience
        while !standardError.contains(text) {
            guard ContinuousClock.now < deadline else {
                Issue.record("stderr never said \"\(text)\": \(standardError)", sourceLocation: sourceLocation)
                return false
            }
            usleep(10_000)
        }
        return true
    }
}

/// A run of `notifywatch` to its end: exit status (`nil` when a signal ended it or it hung),
/// standard output lines and standard error.
func run(_ arguments: [String], testbed: Testbed? = nil) throws -> (status: Int32?, lines: [String], stderr: String) {
    let watcher = try Watcher(arguments, testbed: testbed, json: false, record: false)
    let lines = watcher.rest()
    let status = watcher.waitForExitStatus()
    return (status, lines, watcher.standardError)
}
