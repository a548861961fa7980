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

/// What the processes of one scope have used: CPU time per process (`utime + stime + cutime +
/// cstime` of `/proc/PID/stat`, so the children it reaped count too) and context switches per
/// thread (`voluntary_ctxt_switches`, `nonvoluntary_ctxt_switches` of `/proc/PID/task/TID/status`).
struct ScopeUsage {
    var cpuTicks: [pid_t: Int64] = [:]
    var switches: [pid_t: (voluntary: Int64, involuntary: Int64)] = [:]

    init(_ scope: Scope) {
        for pid in scope.processes {
            if let stat = readText("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") {
                // Fields after the command: state is the 3rd field; utime … cstime the 14th … 17th.
                let fields = stat[stat.index(after: close)...].split(separator: " ")
                if fields.count > 15 { cpuTicks[pid] = fields[11...14].reduce(0) { $0 + (Int64($1) ?? 0) } }
            }
            for thread in ProcessStats.threads(of: pid) {
                var voluntary: Int64 = 0, involuntary: Int64 = 0
                for line in (readText("/proc/\(pid)/task/\(thread.id)/status") ?? "").split(separator: "\n") {
                    if line.hasPrefix("voluntary_ctxt_switches:") { voluntary = Int64(line.split(separator: "\t").last.map { $0.trimmingSpaces } ?? "") ?? 0 }
                    if line.hasPrefix("nonvoluntary_ctxt_switches:") { involuntary = Int64(line.split(separator: "\t").last.map { $0.trimmingSpaces } ?? "") ?? 0 }
                }
                switches[thread.id] = (voluntary, involuntary)
            }
        }
    }

    /// CPU time (ms) and context switches (voluntary, involuntary) from `before` to this one:
    /// processes and threads that are here, less what they had in `before` (a process or
    /// thread that came and went in between counts only through the parent that reaped it, for CPU).
    func since(_ before: ScopeUsage) -> (cpuMilliseconds: Int64, voluntary: Int64, involuntary: Int64) {
        let ticks = cpuTicks.reduce(Int64(0)) { $0 + $1.value - (before.cpuTicks[$1.key] ?? 0) }
        var voluntary: Int64 = 0, involuntary: Int64 = 0
        for (id, now) in switches {
            voluntary += now.voluntary - (before.switches[id]?.voluntary ?? 0)
            involuntary += now.involuntary - (before.switches[id]?.involuntary ?? 0)
        }
        return (ticks * 1000 / Int64(sysconf(Int32(_SC_CLK_TCK))), voluntary, involuntary)
    }
}
