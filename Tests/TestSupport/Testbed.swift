import Harness
import NotifyBus

#if canImport(Glibc)
import Glibc
#endif

/// A umockdev test bed of power_supply (or other udev class) devices, run by Fixtures/testbed.py.
///
/// The script runs under umockdev's preload itself: its uevent sender looks devices up
/// through libudev, which must see the test bed's /sys. It binds no uevent socket, so it cannot
/// collide with the uevent socket of the process under test (Tests/README.md, "umockdev test beds").
public final class Testbed: Sendable {
    /// The script's process.
    public let process: ChildProcess
    /// The test bed's root: the `UMOCKDEV_DIR` of processes that should see it.
    public let root: String

    /// Starts an empty test bed.
    public init() throws {
        process = try ChildProcess(
            executable: "/usr/bin/python3", arguments: ["\(Paths.fixtures)/testbed.py"],
            environment: ChildProcess.environment(with: ["LD_PRELOAD": Paths.preload, "UMOCKDEV_DIR": nil]))
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

    /// Adds `/sys/class/<subsystem>/<name>` with these sysfs attributes and udev properties;
    /// umockdev announces it with an `add` uevent.
    public func add(
        _ name: String, subsystem: String = "power_supply", attributes: [String: String], properties: [String: String]
    ) throws {
        try request([
            ("op", "add"), ("name", .string(name)), ("subsystem", .string(subsystem)),
            ("attributes", Self.object(attributes)), ("properties", Self.object(properties)),
        ])
    }

    /// Adds a device whose properties mirror its attributes, as the kernel's uevent file does
    /// (`status` ↔ `POWER_SUPPLY_STATUS`).
    public func add(_ name: String, _ values: [String: String]) throws {
        try add(name, attributes: values, properties: Self.mirrored(values))
    }

    /// Writes sysfs attributes and udev properties, then sends `uevent` (none when `nil`:
    /// a silent change, as real batteries make for most capacity steps).
    public func set(_ name: String, attributes: [String: String] = [:], properties: [String: String] = [:], uevent: String?) throws {
        var members: [(String, JSONValue)] = [
            ("op", "set"), ("name", .string(name)),
            ("attributes", Self.object(attributes)), ("properties", Self.object(properties)),
        ]
        if let uevent { members.append(("uevent", .string(uevent))) }
        try request(members)
    }

    /// Changes attributes and their mirrored properties together, like the kernel, and sends a
    /// `change` uevent unless `announced` is false.
    public func update(_ name: String, _ values: [String: String], announced: Bool = true) throws {
        try set(name, attributes: values, properties: Self.mirrored(values), uevent: announced ? "change" : nil)
    }

    /// Sends a uevent for `name` without changing anything.
    public func uevent(_ name: String, _ action: String = "change") throws {
        try request([("op", "uevent"), ("name", .string(name)), ("action", .string(action))])
    }

    /// Removes the device: a `remove` uevent, then its sysfs directory; `silently` skips the uevent.
    public func remove(_ name: String, silently: Bool = false) throws {
        try request([("op", "remove"), ("name", .string(name)), ("silent", .bool(silently))])
    }

    private static func mirrored(_ values: [String: String]) -> [String: String] {
        var properties: [String: String] = [:]
        for (attribute, value) in values { properties["POWER_SUPPLY_" + attribute.uppercased()] = value }
        return properties
    }
}
