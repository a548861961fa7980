import NotifyBusDaemon
import SystemSupport
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

private let nextGroupNumber = Atomic<Int>(1)

/// Where freezer tests can run: as root, with a writable cgroup2 mount.
enum FreezerEnvironment {
    /// The first usable cgroup2 mount whose directory root can write to; `nil` when not root or
    /// there is none.
    static let mount: CgroupMount? = {
        guard geteuid() == 0 else { return nil }
        return CgroupMount.usableMounts().first { mount in
            mount.directory(ofGroup: mount.root).map { access($0, W_OK) == 0 } ?? false
        }
    }()

    /// Whether the freezer tests run: in CI always (and fail there when the freezer is not
    /// available), elsewhere only where they can.
    static var testsRun: Bool { isCI || mount != nil }

    /// Whether the environment variable `CI` is set.
    static var isCI: Bool { getenv("CI") != nil }
}

/// Test cgroups under the writable cgroup2 mount (the freezer tests run in CI always, and fail
/// there without one), cleaned up when the test ends
/// (`defer { cgroups.cleanUp() }`).
func freezerGroups() throws -> TestCgroups {
    TestCgroups(mount: try #require(FreezerEnvironment.mount, "no writable cgroup2 mount (as root) in /proc/self/mountinfo"))
}

/// Groups a test makes under a cgroup2 mount (`nb-test-<pid>-<n>` and below), the processes it
/// moves into them, and the clean-up: thaw, move each process back to its original group, kill
/// it, remove the groups deepest first.
final class TestCgroups {
    let mount: CgroupMount
    /// The groups made, as paths in the hierarchy, in the order made.
    private var groups: [String] = []
    private var processes: [(process: ChildProcess, original: String?)] = []
    let name: String

    init(mount: CgroupMount) {
        self.mount = mount
        name = "nb-test-\(getpid())-\(nextGroupNumber.wrappingAdd(1, ordering: .relaxed).oldValue)"
    }

    deinit { cleanUp() }

    /// The directory of `group`.
    func directory(_ group: String) throws -> String {
        guard let directory = mount.directory(ofGroup: group) else { throw HarnessError("\(group) is not under \(mount)") }
        return directory
    }

    /// Makes the group `relative` below this test's own group (`""`: the test's group itself,
    /// `"B"`, `"B/C"`); parents first. Returns its path in the hierarchy.
    @discardableResult
    func make(_ relative: String = "") throws -> String {
        let base = (mount.root == "/" ? "" : mount.root) + "/" + name
        let group = relative.isEmpty ? base : base + "/" + relative
        guard !groups.contains(group) else { return group }
        let path = try directory(group)
        guard mkdir(path, 0o755) == 0 else { throw HarnessError("mkdir \(path): errno \(errno)") }
        groups.append(group)
        return group
    }

    /// Starts `/bin/sleep 600` in `group`.
    func spawnSleeper(in group: String) throws -> ChildProcess {
        let process = try ChildProcess("/bin/sleep", ["600"], environment: ChildProcess.environment(with: [:]), log: "/dev/null")
        processes.append((process, ControlGroup.group(ofProcess: process.pid)))
        try writeFile(try directory(group) + "/cgroup.procs", "\(process.pid)")
        return process
    }

    /// Freezes (`true`) or thaws `group` by writing its `cgroup.freeze`.
    func setFrozen(_ group: String, _ frozen: Bool) throws {
        try writeFile(try directory(group) + "/cgroup.freeze", frozen ? "1" : "0")
    }

    /// Whether `group`'s `cgroup.events` says it is frozen (by itself or an ancestor).
    func isFrozen(_ group: String) -> Bool {
        guard let directory = try? directory(group), let events = readFile(directory + "/cgroup.events") else { return false }
        return ControlGroup.frozen(inEventsFile: events) ?? false
    }

    /// Thaws every group, moves each process back, kills it, moves any other process a test
    /// started in a group to the root group, removes the groups deepest first.
    func cleanUp() {
        for group in groups { try? setFrozen(group, false) }
        for (process, original) in processes {
            if let original, let directory = mount.directory(ofGroup: original) {
                try? writeFile(directory + "/cgroup.procs", "\(process.pid)")
            }
            process.terminate(signal: SIGKILL)
        }
        processes = []
        if let root = mount.directory(ofGroup: mount.root) {
            for group in groups {
                guard let path = mount.directory(ofGroup: group) else { continue }
                for pid in (readFile(path + "/cgroup.procs") ?? "").split(separator: "\n") {
                    try? writeFile(root + "/cgroup.procs", String(pid))
                }
            }
        }
        for group in groups.reversed() {
            guard let path = mount.directory(ofGroup: group) else { continue }
            // A killed process may take a moment to leave its group.
            for _ in 0..<200 {
                if rmdir(path) == 0 || errno == ENOENT { break }
                usleep(10_000)
            }
        }
        groups = []
    }
}
