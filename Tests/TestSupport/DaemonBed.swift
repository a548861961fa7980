public import Harness
public import DBus
public import NotifyBus

#if canImport(Glibc)
import Glibc
#endif

/// `notifybusd` as a child process on a private session bus, its network source fed by
/// python-dbusmock's `networkmanager` template on a private system bus, and the clients the
/// tests start: the Python/Gio example client and `notifywatch --daemon`, each a process of its
/// own with its own connection and PID.
public final class DaemonBed: Sendable {
    public let session: PrivateBus
    public let system: PrivateBus
    public let network: MockService
    /// A connection to the system bus, to drive the mock.
    public let control: DBusClient
    public let daemon: ChildProcess
    /// The daemon's log (its standard output and error).
    public let log: String

    /// Starts the buses, the mock and `notifybusd --source network` (plus `arguments`), and waits
    /// until the daemon owns `org.notifybus.Bus1`; throws at once when the daemon exits instead
    /// (e.g. refusing an argument). `sessionLimits` are `<limit>`s of the session bus's
    /// configuration (e.g. `max_outgoing_bytes`, what it queues for a client that does not read).
    /// `environment` adds to (or, with `nil`, removes from) the daemon's environment;
    /// `sessionConfiguration` is added to the session bus's configuration (more policy);
    /// `sessionBus` is a session bus to serve on instead of one of the bed's own.
    public init(
        arguments: [String] = [], sessionLimits: [String: Int] = [:], environment: [String: String?] = [:],
        sessionConfiguration: String = "", sessionBus: PrivateBus? = nil
    ) async throws {
        session = try sessionBus ?? PrivateBus(.session, limits: sessionLimits, configuration: sessionConfiguration)
        system = try PrivateBus(.system)
        network = try await MockService(bus: system, template: "networkmanager", name: "org.freedesktop.NetworkManager")
        control = try DBusClient(address: system.dbusAddress)
        try await control.waitUntilConnected()
        // The template has `Connectivity` only; `Metered` (2: no) makes a second key.
        _ = try await control.call(
            destination: "org.freedesktop.NetworkManager", path: "/org/freedesktop/NetworkManager",
            interface: "org.freedesktop.DBus.Mock", member: "AddProperty",
            arguments: [.string("org.freedesktop.NetworkManager"), .string("Metered"), .variant(.uint32(2))])
        log = "\(session.directory)/notifybusd.log"
        daemon = try ChildProcess(
            Paths.notifybusd,
            ["--session-bus", session.address, "--system-bus", system.address, "--source", "network"] + arguments,
            environment: session.environment(extra: environment), log: log)
        let daemon = self.daemon
        let log = self.log
        _ = try await session.waitForOwner(of: "org.notifybus.Bus1") {
            guard daemon.hasExited else { return nil }
            return "notifybusd exited: \(readFile(log) ?? "")"
        }
    }

    /// Sets NetworkManager's `Connectivity` (0 unknown … 4 full), as the mock emits it.
    public func setConnectivity(_ state: UInt32) async throws {
        _ = try await control.call(
            destination: "org.freedesktop.NetworkManager", path: "/org/freedesktop", interface: "org.freedesktop.DBus.Mock",
            member: "SetConnectivity", arguments: [.uint32(state)])
    }

    /// Sets NetworkManager's `Metered` (1 yes, 2 no, …) with a `PropertiesChanged`.
    public func setMetered(_ state: UInt32) async throws {
        _ = try await control.call(
            destination: "org.freedesktop.NetworkManager", path: "/org/freedesktop/NetworkManager",
            interface: "org.freedesktop.DBus.Mock", member: "UpdateProperties",
            arguments: [.string("org.freedesktop.NetworkManager"), .vardict([("Metered", .uint32(state))])])
    }

    /// The Python example client subscribed with `arguments`, started inside the cgroup whose
    /// directory is `group` when one is given (the daemon reads a process's group when it first
    /// subscribes), talking to the bus at `address` when one is given (a proxy in front of the
    /// session bus); returns
    /// once it printed its `subscribed` line (the subscription's path).
    public func pythonClient(
        _ arguments: [String], in group: String? = nil, address: String? = nil
    ) throws -> (process: ChildProcess, path: String) {
        let script = Paths.fixtures + "/../../../Examples/python/notifybus-subscribe.py"
        var extra: [String: String?] = ["PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"]
        if let address { extra["DBUS_SESSION_BUS_ADDRESS"] = address }
        let process = try launch(
            ["/usr/bin/python3", script] + arguments, in: group,
            environment: session.environment(extra: extra),
            log: "\(session.directory)/python-client.log")
        guard let line = process.readLine(timeout: .seconds(20)), let first = try? JSONValue(parsing: line),
              case .string(let path)? = first["subscription"]
        else {
            throw HarnessError("the Python client did not subscribe: \(readFile("\(session.directory)/python-client.log") ?? "")")
        }
        return (process, path)
    }

    /// `notifywatch --daemon --json` with `arguments`, started inside the cgroup directory `group`
    /// when one is given.
    public func notifywatch(_ arguments: [String], in group: String? = nil) throws -> ChildProcess {
        try launch(
            [Paths.executable("notifywatch"), "--daemon", "--json", "--session-bus", session.address] + arguments,
            in: group, environment: session.environment(), log: "\(session.directory)/notifywatch.log")
    }

    /// Starts `command`, first moving the process into `group` when one is given.
    private func launch(
        _ command: [String], in group: String?, environment: [String: String], log: String
    ) throws -> ChildProcess {
        let launch = group.map { group in
            ["/bin/sh", "-c", "echo $$ > '\(group)/cgroup.procs' && exec \"$@\"", "sh"] + command
        } ?? command
        return try ChildProcess(
            executable: launch[0], arguments: Array(launch.dropFirst()), environment: environment, standardError: .append(log))
    }

    /// The next JSON line of `process` within `timeout`, parsed; `nil` at end or timeout.
    public func nextLine(of process: ChildProcess, timeout: Duration = .seconds(20)) -> JSONValue? {
        process.readLine(timeout: timeout).flatMap { try? JSONValue(parsing: $0) }
    }

    /// Lines of `process` until one satisfies `predicate` (included), within `timeout`; `nil`
    /// when none did.
    public func lines(
        of process: ChildProcess, until predicate: (JSONValue) -> Bool, timeout: Duration = .seconds(20)
    ) -> [JSONValue]? {
        var lines: [JSONValue] = []
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let line = nextLine(of: process, timeout: deadline - ContinuousClock.now) else { return nil }
            lines.append(line)
            if predicate(line) { return lines }
        }
        return nil
    }
}
