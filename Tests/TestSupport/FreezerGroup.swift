#if canImport(Glibc)
import Glibc
#endif

/// A fresh cgroup v2 group for the freezer tests (root only): processes moved into it, the group
/// frozen and thawed through its `cgroup.freeze`, and on `remove()` (or release) the processes
/// moved back to the root group and the group removed. Groups nest (`child(_:)`), to freeze an
/// ancestor. Only the PIDs the test moved in are touched.
public final class FreezerGroup: Sendable {
    /// The group's directory.
    public let directory: String
    /// The cgroup2 mount it is under.
    public let mount: String
    private let parent: FreezerGroup?

    /// A new group `name` under the first cgroup2 mount of `/proc/self/mountinfo`.
    /// - Throws: `HarnessError` when there is no cgroup2 mount or the group cannot be made.
    public convenience init(name: String) throws {
        guard let mount = Self.cgroup2Mount() else { throw HarnessError("no cgroup2 mount in /proc/self/mountinfo") }
        try self.init(directory: "\(mount)/\(name)", mount: mount, parent: nil)
    }

    private init(directory: String, mount: String, parent: FreezerGroup?) throws {
        guard mkdir(directory, 0o755) == 0 || errno == EEXIST else {
            throw HarnessError("mkdir \(directory): \(String(cString: strerror(errno)))")
        }
        self.directory = directory
        self.mount = mount
        self.parent = parent
    }

    deinit { remove() }

    /// A group inside this one.
    public func child(_ name: String) throws -> FreezerGroup {
        try FreezerGroup(directory: "\(directory)/\(name)", mount: mount, parent: self)
    }

    /// Moves process `pid` into this group.
    public func add(_ pid: pid_t) throws { try write("\(pid)", to: "cgroup.procs") }

    /// Freezes the group (and every group inside it).
    public func freeze() throws { try write("1", to: "cgroup.freeze") }

    /// Thaws it.
    public func thaw() throws { try write("0", to: "cgroup.freeze") }

    /// Whether its `cgroup.events` says `frozen 1`.
    public var isFrozen: Bool {
        (readFile("\(directory)/cgroup.events") ?? "").split(separator: "\n").contains("frozen 1")
    }

    /// Thaws it, moves its processes back to the root group and removes it (children first, by
    /// their own `remove()`).
    public func remove() {
        try? thaw()
        for line in (readFile("\(directory)/cgroup.procs") ?? "").split(separator: "\n") {
            try? write(String(line), toPath: "\(mount)/cgroup.procs")
        }
        rmdir(directory)
    }

    private func write(_ text: String, to file: String) throws {
        try write(text, toPath: "\(directory)/\(file)")
    }

    private func write(_ text: String, toPath path: String) throws {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw HarnessError("open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        guard Glibc.write(fd, bytes, bytes.count) == bytes.count else {
            throw HarnessError("write \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// The mount point of the first cgroup2 file system in `/proc/self/mountinfo`.
    public static func cgroup2Mount() -> String? {
        for line in (readFile("/proc/self/mountinfo") ?? "").split(separator: "\n") {
            let halves = line.split(separator: " - ", maxSplits: 1)
            guard halves.count == 2, halves[1].hasPrefix("cgroup2 ") else { continue }
            let fields = halves[0].split(separator: " ")
            if fields.count >= 5 { return String(fields[4]) }
        }
        return nil
    }

    /// Whether freezer tests can run here: root and a cgroup2 mount with `cgroup.freeze`. On CI
    /// they must (a test that finds it missing fails there instead of being skipped).
    public static var isAvailable: Bool {
        guard getuid() == 0, let mount = cgroup2Mount() else { return false }
        return access("\(mount)/cgroup.procs", W_OK) == 0
    }
}
