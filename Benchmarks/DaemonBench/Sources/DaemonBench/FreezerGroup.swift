import BenchDBus
import ChildProcess
#if canImport(Glibc)
import Glibc
#endif

/// A cgroup v2 group made for the run (root only), frozen and thawed through its
/// `cgroup.freeze`, removed (its processes moved back to the root group) on `remove()`.
final class FreezerGroup {
    let directory: String
    private let mount: String
    private var removed = false

    /// A new group `name` under the first cgroup2 mount of `/proc/self/mountinfo`.
    init(name: String) throws(BenchError) {
        guard let mount = Self.cgroup2Mount() else { throw BenchError("no cgroup2 mount in /proc/self/mountinfo") }
        self.mount = mount
        directory = "\(mount)/\(name)"
        guard mkdir(directory, 0o755) == 0 || errno == EEXIST else {
            throw BenchError("mkdir \(directory): \(String(cString: strerror(errno)))")
        }
    }

    deinit { remove() }

    /// Moves the calling process into the group at `directory`.
    static func join(_ directory: String) throws(BenchError) {
        try write("\(getpid())", to: "\(directory)/cgroup.procs")
    }

    func freeze() throws(BenchError) { try Self.write("1", to: "\(directory)/cgroup.freeze") }

    func thaw() throws(BenchError) { try Self.write("0", to: "\(directory)/cgroup.freeze") }

    /// Whether `cgroup.events` says `frozen 1` (every process in it has stopped).
    var isFrozen: Bool {
        (readText("\(directory)/cgroup.events") ?? "").split(separator: "\n").contains("frozen 1")
    }

    /// Freezes it and waits until every process in it is frozen.
    func freezeAndWait() throws(BenchError) {
        try freeze()
        for _ in 0..<2000 where !isFrozen { usleep(1000) }
        guard isFrozen else { throw BenchError("\(directory) did not freeze within 2 s") }
    }

    func remove() {
        guard !removed else { return }
        removed = true
        try? thaw()
        for line in (readText("\(directory)/cgroup.procs") ?? "").split(separator: "\n") {
            try? Self.write(String(line), to: "\(mount)/cgroup.procs")
        }
        rmdir(directory)
    }

    private static func write(_ text: String, to path: String) throws(BenchError) {
        let descriptor = open(path, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw BenchError("open \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        guard Glibc.write(descriptor, bytes, bytes.count) == bytes.count else {
            throw BenchError("write \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// The mount point of the first cgroup2 file system in `/proc/self/mountinfo`.
    static func cgroup2Mount() -> String? {
        for line in (readText("/proc/self/mountinfo") ?? "").split(separator: "\n") {
            let halves = line.split(separator: " - ", maxSplits: 1)
            guard halves.count == 2, halves[1].hasPrefix("cgroup2 ") else { continue }
            let fields = halves[0].split(separator: " ")
            if fields.count >= 5 { return String(fields[4]) }
        }
        return nil
    }
}

/// The whole text of a (small) file, or `nil` when it cannot be read.
func readText(_ path: String) -> String? { ProcessStats.readText(path) }
