import Harness
import DBus

#if canImport(Glibc)
import Glibc
#endif

/// A python-dbusmock service on a private bus (`/usr/bin/python3 -m dbusmock`), from one of its
/// templates (`iio-sensors-proxy`) or a template file of ours (a path ending in `.py`).
public final class MockService: Sendable {
    public let bus: PrivateBus
    public let name: String
    public let process: ChildProcess
    /// The owner's unique name once it started.
    public let owner: String

    /// Starts the mock and waits until it owns `name`.
    public init(bus: PrivateBus, template: String, name: String, parameters: String? = nil) async throws {
        self.bus = bus
        self.name = name
        var arguments = ["-m", "dbusmock", bus.kind == .system ? "--system" : "--session", "-t", template]
        if let parameters { arguments += ["-p", parameters] }
        let logName = template.split(separator: "/").last.map(String.init) ?? template
        process = try ChildProcess(
            "/usr/bin/python3", arguments, environment: bus.environment(extra: ["PYTHONDONTWRITEBYTECODE": "1"]),
            log: "\(bus.directory)/\(logName).log")
        owner = try await bus.waitForOwner(of: name)
    }

    /// Stops it (SIGTERM) and waits until its name is gone.
    public func stop() async throws {
        process.terminate()
        try await bus.waitForNoOwner(of: name)
    }
}
