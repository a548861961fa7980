import Harness
#if canImport(Glibc)
import Glibc
#endif

/// What the processes of one scope have used: CPU time per process (`utime + stime + cutime +
/// cstime` of `/proc/PID/stat`, so the children it reaped count too) and context switches per
/// thread (`voluntary_ctxt_switches`, `nonvoluntary_ctxt_switches` of `/proc/PID/task/TID/status`).
struct ScopeUsage {
    var cpuTime: [pid_t: Duration] = [:]
    var switches: [pid_t: (voluntary: Int64, involuntary: Int64)] = [:]

    init(_ scope: AppScopes.Scope) {
        for pid in scope.processes {
            cpuTime[pid] = ProcessStats.cpuTime(of: pid, includingReapedChildren: true)
            for thread in ProcessStats.threads(of: pid) {
                switches[thread.id] = (thread.voluntarySwitches, thread.involuntarySwitches)
            }
        }
    }

    /// CPU time (ms) and context switches (voluntary, involuntary) from `before` to this one:
    /// processes and threads that are here, less what they had in `before` (a process or
    /// thread that came and went in between counts only through the parent that reaped it, for CPU).
    func since(_ before: ScopeUsage) -> (cpuMilliseconds: Int64, voluntary: Int64, involuntary: Int64) {
        let cpu = cpuTime.reduce(Duration.zero) { $0 + $1.value - (before.cpuTime[$1.key] ?? .zero) }
        var voluntary: Int64 = 0, involuntary: Int64 = 0
        for (id, now) in switches {
            voluntary += now.voluntary - (before.switches[id]?.voluntary ?? 0)
            involuntary += now.involuntary - (before.switches[id]?.involuntary ?? 0)
        }
        return (cpu.components.seconds * 1000 + cpu.components.attoseconds / 1_000_000_000_000_000, voluntary, involuntary)
    }
}
