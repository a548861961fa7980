import Harness
import DBus
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The REAL systemd-localed (`/lib/systemd/systemd-localed`) on a private system bus, without
/// systemd as PID 1 (Tests/README.md, "localed and timedated").
///
/// It runs in a private mount namespace (`unshare --mount`, root only) where `/etc` and
/// `/usr/lib/locale` are bind-mounted copies in a temporary directory: whatever it writes
/// (`/etc/default/locale`, or the locale archive if it ran locale-gen) lands in the copies,
/// never on the machine. The copy of `/etc/default/locale` starts as `initialLocale` and there
/// is no `/etc/locale.conf`, so localed reads and writes `/etc/default/locale`, as on Debian.
///
/// localed can be started directly (`start()`), or be bus-activated after an exit: the bus's
/// service directory gets `org.freedesktop.locale1.service` running the same wrapper
/// (`installActivation()`). On `deinit` every localed process still on the bus is stopped (the
/// one started here, and an activated one, found by its connection's PID) and the copies removed.
public final class RealLocaled: Sendable {
    public static let name = "org.freedesktop.locale1"
    public static let path = "/org/freedesktop/locale1"

    public let bus: PrivateBus
    /// The temporary directory with the copies and the wrapper script.
    public let directory: String
    /// The wrapper: `unshare --mount`, the bind mounts, then `exec systemd-localed`.
    public let wrapper: String
    private let process = Mutex<ChildProcess?>(nil)

    /// Copies /etc and /usr/lib/locale, sets the copy's `/etc/default/locale`, writes the wrapper.
    public init(bus: PrivateBus, initialLocale: [String] = ["LANG=C.UTF-8"]) async throws {
        self.bus = bus
        directory = try makeTemporaryDirectory("notifybus-localed")
        wrapper = directory + "/localed.sh"
        do {
            let environment = bus.environment()
            _ = try await runCommand("/bin/cp", ["-a", "/etc", directory + "/etc"], environment: environment)
            _ = try await runCommand("/bin/cp", ["-a", "/usr/lib/locale", directory + "/usr-lib-locale"], environment: environment)
            unlink(directory + "/etc/locale.conf")
            try writeFile(directory + "/etc/default/locale", initialLocale.map { $0 + "\n" }.joined())
            try writeFile(wrapper, """
                #!/bin/sh
                # systemd-localed with bind-mounted copies of /etc and /usr/lib/locale (a private mount namespace).
                exec /usr/bin/unshare --mount --propagation private /bin/sh -c \
                  'mount --bind "$0" /etc && mount --bind "$1" /usr/lib/locale && exec /lib/systemd/systemd-localed' \
                  '\(directory)/etc' '\(directory)/usr-lib-locale'

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
        // An activated localed is the bus daemon's grandchild: stop it by its PID, which the bus
        // knows (only a process owning the name on this private bus is signalled).
        if let pid = Self.ownerPID(address: bus.address), pid != started?.pid {
            kill(pid, SIGTERM)
            let deadline = ContinuousClock.now + .seconds(5)
            while kill(pid, 0) == 0, Self.isAlive(pid), ContinuousClock.now < deadline { usleep(5_000) }
            if Self.isAlive(pid) { kill(pid, SIGKILL) }
        }
        removeTree(directory)
    }

    /// The environment localed and the tools that talk to it run with.
    public var environment: [String: String] {
        bus.environment(extra: ["SYSTEMD_LOG_LEVEL": "info", "SYSTEMD_LOG_TARGET": "console"])
    }

    /// Starts localed (the wrapper) and waits until it owns its name; returns its unique name.
    @discardableResult
    public func start() async throws -> String {
        let spawned = try ChildProcess(wrapper, [], environment: environment, log: bus.directory + "/localed.log")
        process.withLock { $0 = spawned }
        return try await bus.waitForOwner(of: Self.name)
    }

    /// Stops the localed started by `start()` (SIGTERM, as its idle exit ends it: the name goes
    /// away) and waits until the name has no owner.
    public func stop() async throws {
        let spawned = process.withLock { process -> ChildProcess? in
            defer { process = nil }
            return process
        }
        spawned?.terminate()
        try await bus.waitForNoOwner(of: Self.name)
    }

    /// Lets the bus start localed when a client calls it (Tests/README.md, "localed and timedated":
    /// private servicedir + ReloadConfig).
    public func installActivation() async throws {
        try await bus.installService(name: Self.name, exec: wrapper)
    }

    /// The current owner's unique name, `nil` when none.
    public func owner() async -> String? {
        try? await runCommand(
            "/usr/bin/busctl", ["--system", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner", "s", Self.name],
            environment: environment
        ).split(separator: "\"").dropFirst().first.map(String.init)
    }

    /// `SetLocale(locale, false)` with `busctl` (sd-bus, as root: authorised without polkit).
    /// Activates localed when it is not running and activation is installed.
    public func setLocale(_ locale: [String]) async throws {
        _ = try await runCommand(
            "/usr/bin/busctl",
            ["--system", "call", Self.name, Self.path, Self.name, "SetLocale", "asb", "\(locale.count)"] + locale + ["false"],
            environment: environment)
    }

    /// `Locale` as localed reports it now (`busctl get-property`).
    public func locale() async throws -> [String] {
        let output = try await runCommand(
            "/usr/bin/busctl", ["--system", "get-property", Self.name, Self.path, Self.name, "Locale"], environment: environment)
        // `as 2 "LANG=C" "LC_MESSAGES=POSIX"`: every other piece between quotes.
        return output.split(separator: "\"", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    /// The copy of `/etc/default/locale` that localed writes.
    public var localeFile: String? { readFile(directory + "/etc/default/locale") }

    private static func isAlive(_ pid: pid_t) -> Bool {
        guard let stat = readFile("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(after: close)...].split(separator: " ").first != "Z"
    }

    /// The PID of `org.freedesktop.locale1`'s owner on the bus at `address`, with `busctl`
    /// (synchronous: used from `deinit`).
    private static func ownerPID(address: String) -> pid_t? {
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
}

/// Whether the real-localed tests can run here: they need root (`unshare --mount`). On a
/// developer's laptop without root they are not run; under CI (`CI` set) they always run,
/// so a CI without root fails instead of quietly skipping them.
public var canRunRealLocaled: Bool {
    geteuid() == 0 || getenv("CI") != nil
}
