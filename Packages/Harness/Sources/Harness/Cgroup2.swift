#if canImport(Glibc)
public import Glibc
#endif

/// The cgroup v2 hierarchy as the harness finds it: where it is mounted, and a process moved into
/// one of its groups.
public enum Cgroup2 {
    /// The first cgroup2 mount of `/proc/self/mountinfo`: its mount point and the group of the
    /// hierarchy it shows (`/` for the whole); `nil` when there is none.
    public static func mount() -> (mountPoint: String, root: String)? {
        for line in (readFile("/proc/self/mountinfo") ?? "").split(separator: "\n") {
            let halves = line.split(separator: " - ", maxSplits: 1)
            guard halves.count == 2, halves[1].hasPrefix("cgroup2 ") else { continue }
            let fields = halves[0].split(separator: " ")
            if fields.count >= 5 { return (String(fields[4]), String(fields[3])) }
        }
        return nil
    }

    /// Moves `pid` (this process unless another is named) into the group whose directory is
    /// `directory`, by writing its `cgroup.procs`.
    /// - Throws: `HarnessError` when the write is refused.
    public static func move(_ pid: pid_t = getpid(), into directory: String) throws {
        try writeFile(directory + "/cgroup.procs", "\(pid)")
    }
}
