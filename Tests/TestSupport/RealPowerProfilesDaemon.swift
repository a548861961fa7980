import Harness
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The REAL power-profiles-daemon (`/usr/libexec/power-profiles-daemon`) on a private system
/// bus, with its fake driver (`POWER_PROFILE_DAEMON_FAKE_DRIVER=1`: power-saver, balanced and
/// performance), in a private mount namespace (`unshare --mount`, root only) whose `/var/lib` is
/// a temporary directory: the `state.ini` it saves lands there, never on the machine.
///
/// Switching profiles asks polkit: start python-dbusmock's `polkitd` on the bus first and allow
/// `net.hadess.PowerProfiles.switch-profile`.
public final class RealPowerProfilesDaemon: Sendable {
    public static let executable = "/usr/libexec/power-profiles-daemon"
    public static let name = "net.hadess.PowerProfiles"

    /// Whether the daemon is installed and this process may make mount namespaces (root).
    public static var isAvailable: Bool { access(executable, X_OK) == 0 && getuid() == 0 }

    public let bus: PrivateBus
    /// The temporary directory mounted on the daemon's `/var/lib`.
    public let directory: String
    private let process = Mutex<ChildProcess?>(nil)

    /// Makes the directory for the daemon's `/var/lib`.
    public init(bus: PrivateBus) throws {
        self.bus = bus
        directory = try makeTemporaryDirectory("notifybus-ppd")
        mkdir(directory + "/power-profiles-daemon", 0o755)
    }

    deinit {
        stop()
        removeTree(directory)
    }

    /// Starts the daemon and waits until it owns its name; returns its unique name.
    @discardableResult
    public func start() async throws -> String {
        let spawned = try ChildProcess(
            "/usr/bin/unshare",
            ["--mount", "--propagation", "private", "/bin/sh", "-c",
             #"mount --bind "$0" /var/lib && exec "$1" -v"#, directory, Self.executable],
            environment: bus.environment(extra: ["POWER_PROFILE_DAEMON_FAKE_DRIVER": "1"]),
            log: bus.directory + "/power-profiles-daemon.log")
        process.withLock { $0 = spawned }
        return try await bus.waitForOwner(of: Self.name)
    }

    /// Stops the daemon (SIGTERM) and waits for it to exit.
    public func stop() {
        let spawned = process.withLock { process -> ChildProcess? in
            defer { process = nil }
            return process
        }
        spawned?.terminate()
    }
}
