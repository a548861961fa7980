import Harness
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The REAL systemd-timedated (`/lib/systemd/systemd-timedated`) on a private system bus, without
/// systemd as PID 1, in a private mount namespace whose `/etc` is a bind-mounted copy
/// (Tests/README.md, "localed and timedated"): `SetTimezone` retargets the copy's `/etc/localtime`,
/// never the machine's.
///
/// Started directly (`start()`) or bus-activated (`installActivation()`). On `deinit` every
/// timedated process still on the bus is stopped (the one started here, and an activated one,
/// found by its connection's PID) and the copy removed.
public final class RealTimedated: Sendable {
    public static let name = "org.freedesktop.timedate1"
    public static let path = "/org/freedesktop/timedate1"

    public let bus: PrivateBus
    /// The temporary directory with the copy of /etc and the wrapper script.
    public let directory: String
    /// The wrapper: `unshare --mount`, the bind mount, then `exec systemd-timedated`.
    public let wrapper: String
    private let process = Mutex<ChildProcess?>(nil)

    /// Copies /etc, points the copy's `localtime` at `initialZone`, writes the wrapper.
    public init(bus: PrivateBus, initialZone: String = "Etc/UTC") async throws {
        self.bus = bus
        directory = try makeTemporaryDirectory("notifybus-timedated")
        wrapper = directory + "/timedated.sh"
        do {
            _ = try await runCommand("/bin/cp", ["-a", "/etc", directory + "/etc"], environment: bus.environment())
            unlink(localtime)
            guard symlink("../usr/share/zoneinfo/" + initialZone, localtime) == 0 else { throw HarnessError("symlink: errno \(errno)") }
            try writeFile(wrapper, """
                #!/bin/sh
                # systemd-timedated with a bind-mounted copy of /etc (a private mount namespace).
                exec /usr/bin/unshare --mount --propagation private /bin/sh -c \
                  'mount --bind "$0" /etc && exec /lib/systemd/systemd-timedated' '\(directory)/etc'

                """)
            chmod(wrapper, 0o755)
        } catch {
            removeTree(directory)
            throw error
        }
    }

    deinit {
        let started = process.withLock { $0 }
        started?.terminate()
        if let pid = ownerPID(of: Self.name, address: bus.address), pid != started?.pid {
            stopProcess(pid)
        }
        removeTree(directory)
    }

    /// The copy's `/etc/localtime`, the link timedated reads and writes.
    public var localtime: String { directory + "/etc/localtime" }

    /// The environment timedated and the tools that talk to it run with.
    public var environment: [String: String] {
        bus.environment(extra: ["SYSTEMD_LOG_LEVEL": "info", "SYSTEMD_LOG_TARGET": "console"])
    }

    /// Starts timedated (the wrapper) and waits until it owns its name; returns its unique name.
    @discardableResult
    public func start() async throws -> String {
        let spawned = try ChildProcess(wrapper, [], environment: environment, log: bus.directory + "/timedated.log")
        process.withLock { $0 = spawned }
        return try await bus.waitForOwner(of: Self.name)
    }

    /// Stops the timedated started by `start()` (SIGTERM, as its idle exit ends it) and waits
    /// until the name has no owner.
    public func stop() async throws {
        let spawned = process.withLock { process -> ChildProcess? in
            defer { process = nil }
            return process
        }
        spawned?.terminate()
        try await bus.waitForNoOwner(of: Self.name)
    }

    /// Lets the bus start timedated when a client calls it.
    public func installActivation() async throws {
        try await bus.installService(name: Self.name, exec: wrapper)
    }

    /// `SetTimezone(zone, false)` with `busctl` (as root: authorised without polkit). Activates
    /// timedated when it is not running and activation is installed.
    public func setTimezone(_ zone: String) async throws {
        _ = try await runCommand(
            "/usr/bin/busctl", ["--system", "call", Self.name, Self.path, Self.name, "SetTimezone", "sb", zone, "false"],
            environment: environment)
    }
}

/// Stops `pid` (SIGTERM, then SIGKILL after 5 s).
func stopProcess(_ pid: pid_t) {
    kill(pid, SIGTERM)
    let deadline = ContinuousClock.now + .seconds(5)
    while isAlive(pid), ContinuousClock.now < deadline { usleep(5_000) }
    if isAlive(pid) { kill(pid, SIGKILL) }
}

/// Whether `pid` runs (exists and is not a zombie).
func isAlive(_ pid: pid_t) -> Bool {
    guard kill(pid, 0) == 0, let stat = readFile("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return false }
    return stat[stat.index(after: close)...].split(separator: " ").first != "Z"
}

/// The PID of `name`'s owner on the bus at `address`, with `busctl` (synchronous: for `deinit`).
func ownerPID(of name: String, address: String) -> pid_t? {
    guard let log = try? makeTemporaryFile("notifybus-owner") else { return nil }
    defer { unlink(log) }
    guard let process = try? ChildProcess(
        "/usr/bin/busctl",
        ["--system", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixProcessID", "s", name],
        environment: ChildProcess.environment(with: ["DBUS_SYSTEM_BUS_ADDRESS": address, "LD_PRELOAD": nil]), log: log)
    else { return nil }
    guard process.terminate(signal: 0, timeout: .seconds(5)) == 0 else { return nil }
    // `u 12345`
    return readFile(log)?.split(separator: " ").last.flatMap { pid_t(String($0.filter(\.isNumber))) }
}
