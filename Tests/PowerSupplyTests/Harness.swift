import NotifyBus
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// How long to wait for something that should happen (generous: CI machines are slow).
let patience: Duration = .seconds(10)

/// Where the test's companions live.
enum Paths {
    /// The directory of this file's fixtures (the umockdev test-bed script).
    static let fixtures: String = {
        let file = "\(#filePath)"
        return String(file[..<(file.lastIndex(of: "/") ?? file.endIndex)]) + "/Fixtures"
    }()

    /// The PowerSupplyProbe executable, built beside the test bundle by `swift build`/`swift test`.
    static let probe: String = {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let exe = n > 0 ? String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        let directory = String(exe[..<(exe.lastIndex(of: "/") ?? exe.endIndex)])
        return directory + "/PowerSupplyProbe"
    }()

    /// umockdev's preload library, by its soname (found through the loader's path).
    static let preload = "libumockdev-preload.so.0"
}

/// This process's environment with `changes` applied (`nil` removes a variable).
func environment(with changes: [String: String?]) -> [String: String] {
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

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A umockdev test bed of power_supply devices, run by Fixtures/testbed.py.
///
/// The script runs under umockdev's preload itself: its uevent sender looks devices up
/// through libudev, which must see the test bed's /sys. It binds no uevent socket, so it cannot
/// collide with the probe's (SOURCES.md §6).
final class Testbed {
    let process: ChildProcess
    /// The test bed's root: the `UMOCKDEV_DIR` of processes that should see it.
    let root: String

    init() throws {
        process = try ChildProcess(
            executable: "/usr/bin/python3", arguments: ["\(Paths.fixtures)/testbed.py"],
            environment: environment(with: ["LD_PRELOAD": Paths.preload, "UMOCKDEV_DIR": nil]))
        guard let line = process.readLine(timeout: patience),
              case .string(let root)? = try? JSONValue(parsing: line)["root"]
        else { throw HarnessError("testbed.py did not report its root directory") }
        self.root = root
    }

    deinit {
        process.send(#"{"op": "quit"}"#)
        _ = process.readLine(timeout: .seconds(2))
        process.closeInput()
        process.waitForExit(timeout: .seconds(5))
    }

    private func request(_ members: [(String, JSONValue)]) throws {
        process.send(JSONValue.object(JSONObject(members)).jsonText)
        guard let line = process.readLine(timeout: patience) else {
            throw HarnessError("testbed.py did not answer \(members.first?.1 ?? "")")
        }
        let reply = try JSONValue(parsing: line)
        guard reply["ok"] == true else { throw HarnessError("testbed.py: \(reply["error"] ?? .null)") }
    }

    private static func object(_ values: [String: String]) -> JSONValue {
        .object(JSONObject(values.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value)) }))
    }

    /// Adds `/sys/class/power_supply/<name>` with these sysfs attributes and udev properties;
    /// umockdev announces it with an `add` uevent.
    func add(_ name: String, attributes: [String: String], properties: [String: String]) throws {
        try request([
            ("op", "add"), ("name", .string(name)),
            ("attributes", Self.object(attributes)), ("properties", Self.object(properties)),
        ])
    }

    /// Adds a device whose properties mirror its attributes, as the kernel's uevent file does
    /// (`status` ↔ `POWER_SUPPLY_STATUS`).
    func add(_ name: String, _ values: [String: String]) throws {
        try add(name, attributes: values, properties: Self.mirrored(values))
    }

    /// Writes sysfs attributes and udev properties, then sends `uevent` (none when `nil`:
    /// a silent change, as real batteries make for most capacity steps).
    func set(_ name: String, attributes: [String: String] = [:], properties: [String: String] = [:], uevent: String?) throws {
        var members: [(String, JSONValue)] = [
            ("op", "set"), ("name", .string(name)),
            ("attributes", Self.object(attributes)), ("properties", Self.object(properties)),
        ]
        if let uevent { members.append(("uevent", .string(uevent))) }
        try request(members)
    }

    /// Changes attributes and their mirrored properties together, like the kernel, and sends a
    /// `change` uevent unless `announced` is false.
    func update(_ name: String, _ values: [String: String], announced: Bool = true) throws {
        try set(name, attributes: values, properties: Self.mirrored(values), uevent: announced ? "change" : nil)
    }

    /// Sends a uevent for `name` without changing anything.
    func uevent(_ name: String, _ action: String = "change") throws {
        try request([("op", "uevent"), ("name", .string(name)), ("action", .string(action))])
    }

    /// Removes the device: a `remove` uevent, then its sysfs directory; `silently` skips the uevent.
    func remove(_ name: String, silently: Bool = false) throws {
        try request([("op", "remove"), ("name", .string(name)), ("silent", .bool(silently))])
    }

    private static func mirrored(_ values: [String: String]) -> [String: String] {
        var properties: [String: String] = [:]
        for (attribute, value) in values { properties["POWER_SUPPLY_" + attribute.uppercased()] = value }
        return properties
    }
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
    /// Every line read so far.
    private(set) var lines: [JSONValue] = []

    init(testbed: Testbed, arguments: [String] = []) throws {
        process = try ChildProcess(
            executable: Paths.probe, arguments: arguments,
            environment: environment(with: ["LD_PRELOAD": Paths.preload, "UMOCKDEV_DIR": testbed.root]))
    }

    deinit {
        process.send("quit")
        process.closeInput()
        if process.waitForExit(timeout: .seconds(5)) == nil { kill(process.pid, SIGKILL) }
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
            lines.append(line)
            read.append(line)
            if predicate(line) { return read }
        }
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
