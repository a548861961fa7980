#if canImport(Glibc)
import Glibc
#endif

/// Why the benchmark cannot go on.
struct HarnessError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// A cgroup2 group whose `memory.pressure` both receivers watch, and a 16 MiB memory limit for the
/// hog (Tests/README.md, "Memory pressure", as the memory source's tests make pressure): a v1
/// memory group where the memory controller is on cgroup v1 (these machines), else the group's own
/// `memory.max`. Both hierarchies are mounted afresh in a scratch directory, so nothing is assumed
/// of /sys/fs/cgroup.
final class PressureGroup {
    /// The scratch directory (mounts, and the hog's 64 MiB file).
    let directory: String
    /// The group's `memory.pressure`.
    let pressureFile: String
    /// The `cgroup.procs` files the hog writes its PID to.
    let procsFiles: [String]
    private var mounts: [String] = []
    private var groups: [String] = []

    init() throws {
        guard geteuid() == 0 else { throw HarnessError("real memory pressure needs root, for cgroup mounts") }
        var template = Array("/var/tmp/nb-pressure-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw HarnessError("mkdtemp: \(String(cString: strerror(errno)))")
        }
        directory = String(cString: made)
        let name = "nb-pressure-bench-\(getpid())"
        let unified = directory + "/unified"
        mkdir(unified, 0o755)
        guard mount("none", unified, "cgroup2", 0, nil) == 0 else { throw HarnessError("mount cgroup2: errno \(errno)") }
        mounts.append(unified)
        let group = unified + "/" + name
        guard mkdir(group, 0o755) == 0 else { throw HarnessError("mkdir \(group): errno \(errno)") }
        groups.append(group)
        pressureFile = group + "/memory.pressure"

        let memory = directory + "/memory"
        mkdir(memory, 0o755)
        if mount("none", memory, "cgroup", 0, "memory") == 0 {
            mounts.append(memory)
            let limited = memory + "/" + name
            guard mkdir(limited, 0o755) == 0 else { throw HarnessError("mkdir \(limited): errno \(errno)") }
            groups.append(limited)
            try Self.write(limited + "/memory.limit_in_bytes", "16M")
            procsFiles = [limited + "/cgroup.procs", group + "/cgroup.procs"]
        } else {
            // The memory controller is on cgroup2 here.
            try Self.write(unified + "/cgroup.subtree_control", "+memory")
            try Self.write(group + "/memory.max", "16M")
            try? Self.write(group + "/memory.swap.max", "0")
            procsFiles = [group + "/cgroup.procs"]
        }
    }

    deinit { cleanUp() }

    /// Removes the groups (the hog is gone by then) and the mounts, and the scratch directory.
    func cleanUp() {
        for group in groups.reversed() {
            for _ in 0..<200 {
                if rmdir(group) == 0 || errno == ENOENT { break }
                usleep(10_000)
            }
        }
        groups = []
        for mount in mounts {
            umount2(mount, Int32(MNT_DETACH))
            rmdir(mount)
        }
        mounts = []
        unlink(directory + "/data")
        rmdir(directory)
    }

    private static func write(_ path: String, _ text: String) throws {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw HarnessError("open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard text.withCString({ Glibc.write(fd, $0, strlen($0)) }) >= 0 else {
            throw HarnessError("write \(path): \(String(cString: strerror(errno)))")
        }
    }
}
