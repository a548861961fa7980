import BenchDBus
#if canImport(Glibc)
import Glibc
#endif

/// What /proc says about a process and its threads.
enum ProcessStats {
    /// One thread: its id, name, voluntary context switches and time on a CPU.
    struct Thread {
        var id: Int32
        var name: String
        var voluntarySwitches: Int64
        var cpuNanoseconds: Int64
    }

    /// The process's threads now (those it has; an exited thread's counts are gone).
    static func threads(of pid: pid_t) -> [Thread] {
        var threads: [Thread] = []
        guard let directory = opendir("/proc/\(pid)/task") else { return [] }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let id = Int32(name) else { continue }
            let base = "/proc/\(pid)/task/\(id)"
            var switches: Int64 = 0
            for line in (readText("\(base)/status") ?? "").split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches:") {
                switches = Int64(line.split(separator: "\t").last.map { $0.trimmingSpaces } ?? "") ?? 0
            }
            let cpu = (readText("\(base)/schedstat") ?? "").split(separator: " ").first.flatMap { Int64($0) } ?? 0
            let comm = (readText("\(base)/comm") ?? "").trimmingSpaces
            threads.append(Thread(id: id, name: comm, voluntarySwitches: switches, cpuNanoseconds: cpu))
        }
        return threads.sorted { $0.id < $1.id }
    }

    /// Time on a CPU of all the process's threads now, in nanoseconds.
    static func cpuNanoseconds(of pid: pid_t) -> Int64 {
        threads(of: pid).reduce(0) { $0 + $1.cpuNanoseconds }
    }

    /// A field of `/proc/PID/status` in KiB (`VmRSS`, `RssAnon`, …), or 0.
    static func statusKiB(_ field: String, of pid: pid_t) -> Int64 {
        for line in (readText("/proc/\(pid)/status") ?? "").split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int64(line.split(separator: " ").dropLast().last.map(String.init) ?? "") ?? 0
        }
        return 0
    }

    /// Resets the process's peak resident size (`VmHWM`) to its resident size now, by writing
    /// `5` to `/proc/PID/clear_refs` (Linux 4.0 and later); `false` where that is refused.
    static func resetPeakResident(of pid: pid_t) -> Bool {
        let descriptor = open("/proc/\(pid)/clear_refs", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return write(descriptor, "5", 1) == 1
    }

    /// The state letter of `/proc/PID/stat` (`R`, `S`, `T`, `Z`, …), or `nil` when it is gone.
    static func state(of pid: pid_t) -> Character? {
        guard let stat = readText("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return nil }
        return stat[close...].dropFirst(2).first
    }
}

extension StringProtocol {
    var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" || $0 == "\n" }.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\n" }.reversed())
    }
}
