import BenchDBus
import ChildProcess
#if canImport(Glibc)
import Glibc
#endif

/// Small file and cgroup helpers.
enum Cgroup {
    /// Moves the calling process into the group at `directory`.
    static func join(_ directory: String) throws(BenchError) {
        try writeText("\(getpid())", to: "\(directory)/cgroup.procs")
    }

    /// The mount point of the first cgroup2 file system in `/proc/self/mountinfo`.
    static func mount() -> String? {
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
