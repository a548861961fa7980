import SystemSupport
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Where the tests on a headless sway with windows in app scopes can run: as root, with sway and
/// foot installed and a writable cgroup2 mount.
enum SwayBedEnvironment {
    /// The first usable cgroup2 mount whose directory root can write to; `nil` when not root or
    /// there is none.
    static let mount: CgroupMount? = {
        guard geteuid() == 0 else { return nil }
        return CgroupMount.usableMounts().first { mount in
            mount.directory(ofGroup: mount.root).map { access($0, W_OK) == 0 } ?? false
        }
    }()

    /// Whether sway, swaymsg and foot are installed.
    static let hasSway = ["/usr/bin/sway", "/usr/bin/swaymsg", "/usr/bin/foot"].allSatisfy { (program: String) in access(program, X_OK) == 0 }

    /// Whether the tests run: in CI always (and fail there when the bed cannot be made),
    /// elsewhere only where they can.
    static var testsRun: Bool { getenv("CI") != nil || (mount != nil && hasSway) }

    /// A private tree of app scopes under the writable cgroup2 mount.
    static func appScopes() throws -> AppScopes {
        guard let mount else { throw HarnessError("no writable cgroup2 mount (as root) in /proc/self/mountinfo") }
        return try AppScopes(mountPoint: mount.mountPoint, mountRoot: mount.root)
    }
}
