import SystemSupport
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Where the tests against a real systemd user manager can run: as root, with a writable cgroup2
/// mount that shows the hierarchy's root, systemd and dbus-user-session installed.
enum SystemdBedEnvironment {
    /// Whether systemd, its tools and the session bus's user units are installed.
    static let hasSystemd =
        SystemdUserManager.programs.allSatisfy { (program: String) in access(program, X_OK) == 0 }
        && access(SystemdUserManager.busSocketUnit, R_OK) == 0

    /// Whether the tests run: in CI always (and fail there when the manager cannot run),
    /// elsewhere only where they can.
    static var testsRun: Bool { getenv("CI") != nil || (SwayBedEnvironment.mount?.root == "/" && hasSystemd) }

    /// A user manager in a private tree under the writable cgroup2 mount.
    static func manager() async throws -> SystemdUserManager {
        guard let mount = SwayBedEnvironment.mount else { throw HarnessError("no writable cgroup2 mount (as root) in /proc/self/mountinfo") }
        return try await SystemdUserManager(mountPoint: mount.mountPoint, mountRoot: mount.root)
    }

    /// The `init.scope` directory at the root of the hierarchy, which systemd's freezer check needs.
    static var rootInitScope: String? { SwayBedEnvironment.mount.map { $0.mountPoint + "/init.scope" } }
}
