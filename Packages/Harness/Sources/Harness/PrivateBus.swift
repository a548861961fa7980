public import DBus
import Synchronization

#if canImport(Glibc)
public import Glibc
#endif

/// A private `dbus-daemon` for one test (Tests/README.md, "Private buses"), never the machine's bus.
///
/// Its address has no `guid`, so a client can reconnect to a restarted daemon on the same socket.
public final class PrivateBus: Sendable {
    public enum Kind: String, Sendable { case system, session }

    public let kind: Kind
    /// The temporary directory with the config, socket, service files and logs.
    public let directory: String
    /// `unix:path=<directory>/bus_socket`.
    public let address: String
    private let daemon = Mutex<ChildProcess?>(nil)

    /// Starts a daemon and waits until it listens; `limits` are `<limit name="…">` values of its
    /// configuration (the daemon's own defaults otherwise), and `configuration` is added to its
    /// `<busconfig>` as it is (more policy).
    public init(_ kind: Kind = .system, limits: [String: Int] = [:], configuration: String = "") throws {
        self.kind = kind
        directory = try makeTemporaryDirectory("notifybus-dbus")
        address = "unix:path=\(directory)/bus_socket"
        mkdir("\(directory)/services", 0o755)
        try writeFile("\(directory)/bus.conf", """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>\(kind.rawValue)</type>
              <keep_umask/>
              <listen>\(address)</listen>
              <auth>EXTERNAL</auth>
              <servicedir>\(directory)/services</servicedir>
            \(Self.openPolicy)
            \(limits.sorted { $0.key < $1.key }.map { "  <limit name=\"\($0.key)\">\($0.value)</limit>\n" }.joined())\(configuration)
            </busconfig>
            """)
        try start()
    }

    /// The policy of every bus the harness configures: any user connects, owns any name, sends to
    /// anyone and may monitor.
    static let openPolicy = """
          <policy context="default">
            <allow user="*"/>
            <allow own="*"/>
            <allow send_destination="*" eavesdrop="true"/>
            <allow receive_sender="*"/>
            <allow eavesdrop="true"/>
          </policy>
        """

    /// A session bus that another program runs at `address` (a systemd user manager's own):
    /// this object neither starts nor stops it; its directory holds the tests' logs only.
    public init(runBy address: String) throws {
        kind = .session
        directory = try makeTemporaryDirectory("notifybus-dbus")
        self.address = address
    }

    deinit {
        stop()
        removeTree(directory)
    }

    /// The running `dbus-daemon`'s process ID (`nil` while it is stopped, or when another program runs the bus).
    public var pid: pid_t? { daemon.withLock { $0?.pid } }

    /// The environment variable that points clients at this bus.
    public var environmentVariable: String {
        kind == .system ? "DBUS_SYSTEM_BUS_ADDRESS" : "DBUS_SESSION_BUS_ADDRESS"
    }

    /// Where clients of the library connect.
    public var dbusAddress: DBusAddress { .address(address) }

    /// Starts the daemon (again) and waits until it prints its address.
    public func start() throws {
        guard access("\(directory)/bus.conf", R_OK) == 0 else { throw HarnessError("the bus at \(address) is not this test's to start") }
        // The daemon listens before it prints its address.
        let (spawned, _) = try ChildProcess.start(
            "/usr/bin/dbus-daemon",
            ["--config-file=\(directory)/bus.conf", "--nofork", "--nopidfile", "--nosyslog", "--print-address=3"],
            // Activated services inherit the daemon's environment: point them at this bus.
            environment: ChildProcess.environment(with: ["LD_PRELOAD": nil, environmentVariable: address]),
            log: "\(directory)/dbus-daemon.log", reportingOn: 3, timeout: .seconds(10))
        daemon.withLock { $0 = spawned }
    }

    /// Stops the daemon (SIGTERM, then SIGKILL): every client is disconnected.
    public func stop() {
        let spawned = daemon.withLock { daemon -> ChildProcess? in
            defer { daemon = nil }
            return daemon
        }
        spawned?.terminate()
    }

    /// Installs a bus-activation file for `name` running `exec`, and asks the daemon to reload.
    public func installService(name: String, exec: String) async throws {
        try writeFile("\(directory)/services/\(name).service", "[D-BUS Service]\nName=\(name)\nExec=\(exec)\n")
        let client = try DBusClient(address: dbusAddress)
        try await client.waitUntilConnected()
        _ = try await client.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "ReloadConfig")
        await client.close()
    }

    /// Waits until `name` has an owner on this bus (or `timeout`); returns the owner. `abandon`,
    /// asked between tries, ends the wait early with the error it returns (e.g. the process that
    /// should own the name has exited).
    @discardableResult
    public func waitForOwner(
        of name: String, timeout: Duration = .seconds(30), abandon: () -> String? = { nil }
    ) async throws -> String {
        let client = try DBusClient(address: dbusAddress)
        defer { Task { await client.close() } }
        try await client.waitUntilConnected()
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let owner = try? await client.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "GetNameOwner", arguments: [.string(name)]).first?.stringValue
            {
                return owner
            }
            if let reason = abandon() { throw HarnessError("\(name) got no owner: \(reason)") }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw HarnessError("\(name) got no owner within \(timeout)")
    }

    /// Waits until `name` has no owner on this bus.
    public func waitForNoOwner(of name: String, timeout: Duration = .seconds(10)) async throws {
        let client = try DBusClient(address: dbusAddress)
        defer { Task { await client.close() } }
        try await client.waitUntilConnected()
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            do {
                _ = try await client.call(
                    destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                    member: "GetNameOwner", arguments: [.string(name)])
            } catch {
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw HarnessError("\(name) still has an owner after \(timeout)")
    }

    /// The environment for a process that should use this bus (preload removed).
    public func environment(extra: [String: String?] = [:]) -> [String: String] {
        var changes: [String: String?] = [environmentVariable: address, "LD_PRELOAD": nil]
        for (name, value) in extra { changes[name] = value }
        return ChildProcess.environment(with: changes)
    }
}
