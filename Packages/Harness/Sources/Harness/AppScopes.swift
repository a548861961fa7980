import Synchronization

#if canImport(Glibc)
import Glibc
#endif

private let nextTreeNumber = Atomic<Int>(1)

/// A private cgroup v2 tree shaped like a systemd user session's app units, for the
/// app-lifecycle tests and benchmarks: `nb-life-<pid>-<n>/user@0.service/app.slice` under a
/// cgroup2 mount, with app scopes made in `app.slice` (`app-test-org.example.A-1.scope`), and
/// other groups beside `user@0.service` (a benchmark's own). Its `app.slice` is what notifybusd is
/// given as its cgroup root.
///
/// `remove()` (or dropping the object) thaws every group of the tree, moves the processes still
/// in it to the mount's root group, and removes the groups deepest first: a test never leaves a
/// group frozen or behind. (Killing the processes is their owner's business, e.g.
/// `HeadlessSway.stop()`.)
public final class AppScopes: Sendable {
    /// One app scope of the tree.
    public struct Scope: Sendable, Hashable {
        /// Its name (`app-test-org.example.A-1.scope`).
        public var name: String
        /// Its path in the hierarchy, as in the `0::` line of `/proc/PID/cgroup`.
        public var group: String
        /// Its directory.
        public var directory: String

        /// Its `cgroup.events` (`populated`, `frozen`), which inotify reports modified when either changes.
        public var eventsFile: String { directory + "/cgroup.events" }

        /// Whether its `cgroup.events` says `frozen 1`.
        public var isFrozen: Bool {
            (readFile(eventsFile) ?? "").split(separator: "\n").contains("frozen 1")
        }

        /// Whether its own `cgroup.freeze` says 1 (a freeze asked of it, not of an ancestor).
        public var isFreezeRequested: Bool {
            readFile(directory + "/cgroup.freeze")?.hasPrefix("1") ?? false
        }

        /// The PIDs in it (its `cgroup.procs`).
        public var processes: [Int32] {
            (readFile(directory + "/cgroup.procs") ?? "").split(separator: "\n").compactMap { Int32($0) }
        }

        /// Freezes (`true`) or thaws it by writing its `cgroup.freeze`.
        public func setFrozen(_ frozen: Bool) throws {
            try writeFile(directory + "/cgroup.freeze", frozen ? "1" : "0")
        }

        /// Freezes it and waits (polling every millisecond, up to `timeout`) for `frozen 1`.
        /// - Throws: `HarnessError` when it did not freeze in time.
        public func freezeAndWait(timeout: Duration = .seconds(5)) throws {
            try setFrozen(true)
            let deadline = ContinuousClock.now + timeout
            while !isFrozen, ContinuousClock.now < deadline { usleep(1000) }
            guard isFrozen else { throw HarnessError("\(name) did not freeze within \(timeout)") }
        }
    }

    /// The tree's `app.slice`, as a path in the hierarchy (`/nb-life-123-1/user@0.service/app.slice`):
    /// the cgroup root notifybusd is given.
    public let root: String
    /// The directory of `root`.
    public let directory: String
    /// Where the cgroup2 hierarchy is mounted.
    public let mountPoint: String
    /// The directory of the tree's top group (`nb-life-123-1`), where `makeGroup` makes groups.
    public let topDirectory: String
    /// The directories made, in the order made.
    private let made = Mutex<[String]>([])

    /// Makes the tree under the cgroup2 mount at `mountPoint`, which shows the group `mountRoot`
    /// of the hierarchy (`/` for the whole); its top group is `name`, or `nb-life-<pid>-<n>`.
    /// - Throws: `HarnessError` when a group cannot be made (not root, no writable mount).
    public init(mountPoint: String, mountRoot: String = "/", name: String? = nil) throws {
        let base = mountPoint.hasSuffix("/") ? String(mountPoint.dropLast()) : mountPoint
        let top = name ?? "nb-life-\(getpid())-\(nextTreeNumber.wrappingAdd(1, ordering: .relaxed).oldValue)"
        let relative = "/\(top)/user@0.service/app.slice"
        self.mountPoint = base
        topDirectory = base + "/" + top
        root = (mountRoot == "/" ? "" : mountRoot) + relative
        directory = base + relative
        try make(base + "/" + top)
        try make(base + "/" + top + "/user@0.service")
        try make(directory)
    }

    deinit { remove() }

    /// Makes the scope `name` in `app.slice` (a systemd app unit's name:
    /// `app-<app-id>-<random>.scope`, `app-<launcher>-<app-id>-<random>.scope`,
    /// `app-<launcher>-<app-id>@<random>.service`).
    @discardableResult
    public func makeScope(name: String) throws -> Scope {
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else { throw HarnessError("bad scope name \(name)") }
        try make(directory + "/" + name)
        return Scope(name: name, group: root + "/" + name, directory: directory + "/" + name)
    }

    /// Makes the group `name` in the tree's top group (beside `user@0.service`); its directory.
    @discardableResult
    public func makeGroup(_ name: String) throws -> String {
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else { throw HarnessError("bad group name \(name)") }
        try make(topDirectory + "/" + name)
        return topDirectory + "/" + name
    }

    private func make(_ path: String) throws {
        guard mkdir(path, 0o755) == 0 else { throw HarnessError("mkdir \(path): errno \(errno)") }
        made.withLock { $0.append(path) }
    }

    /// Thaws every group of the tree, moves every process in it to the mount's root group, and
    /// removes the groups, deepest first (waiting up to 2 s for each, as a killed process may take
    /// a moment to leave). Calling it again does nothing.
    public func remove() {
        let groups = made.withLock { made in defer { made = [] }; return made }
        for path in groups.reversed() { try? writeFile(path + "/cgroup.freeze", "0") }
        for path in groups.reversed() {
            for pid in (readFile(path + "/cgroup.procs") ?? "").split(separator: "\n") {
                try? writeFile(mountPoint + "/cgroup.procs", String(pid))
            }
        }
        for path in groups.reversed() {
            for _ in 0..<200 {
                if rmdir(path) == 0 || errno == ENOENT { break }
                usleep(10_000)
            }
        }
    }
}
