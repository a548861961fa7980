/// A plain libdbus service on a private bus: `Fixtures/plain_version_service.py` (dbus-python, so
/// libdbus, on a GLib main loop), owning `name` and answering `Get` of `Version` on
/// `/org/notifybus/Bus1` (`org.notifybus.Bus1`) with 2, as notifybusd does, and every other call
/// with `UnknownMethod` from its header alone. The anchor of notifybusd's answer times where
/// messages larger than 8 MiB are in flight to it (specification: D-Bus interface, "Responsiveness"): the
/// same calls sent to this service measure what the transport costs.
public final class PlainVersionService: Sendable {
    public static let defaultName = "org.notifybus.test.PlainVersion"
    public let bus: PrivateBus
    public let name: String
    public let process: ChildProcess

    /// Starts it on `bus` and waits until it owns `name`; throws at once when it exits instead.
    public init(bus: PrivateBus, name: String = defaultName) async throws {
        self.bus = bus
        self.name = name
        let log = "\(bus.directory)/plain-version-service.log"
        let process = try ChildProcess(
            "/usr/bin/python3", [Paths.fixtures + "/plain_version_service.py", name],
            environment: bus.environment(extra: ["PYTHONDONTWRITEBYTECODE": "1", "DBUS_SESSION_BUS_ADDRESS": bus.address]),
            log: log)
        self.process = process
        _ = try await bus.waitForOwner(of: name) {
            guard process.hasExited else { return nil }
            return "the plain service exited: \(readFile(log) ?? "")"
        }
    }

    /// Stops it (SIGTERM, then SIGKILL) and reaps it.
    public func stop() {
        process.terminate()
    }
}
