#if canImport(Glibc)
public import Glibc
#endif

/// What `/proc` says about a process (any process, not only a `ChildProcess`) and its threads.
public enum ProcessStats {
    /// One thread: its id, name, context switches and time on a CPU.
    public struct Thread: Sendable {
        public var id: Int32
        public var name: String
        /// `voluntary_ctxt_switches` of `/proc/PID/task/TID/status`: its wake-ups.
        public var voluntarySwitches: Int64
        /// `nonvoluntary_ctxt_switches`: the times it was preempted.
        public var involuntarySwitches: Int64
        /// The first field of `/proc/PID/task/TID/schedstat`: nanoseconds on a CPU.
        public var cpuNanoseconds: Int64
    }

    /// The process's threads now, by id (those it has; an exited thread's counts are gone);
    /// none when the process is gone.
    public static func threads(of pid: pid_t) -> [Thread] {
        var threads: [Thread] = []
        guard let directory = opendir("/proc/\(pid)/task") else { return [] }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let id = Int32(name) else { continue }
            let base = "/proc/\(pid)/task/\(id)"
            var voluntary: Int64 = 0, involuntary: Int64 = 0
            for line in (readText("\(base)/status") ?? "").split(separator: "\n") {
                if line.hasPrefix("voluntary_ctxt_switches:") { voluntary = number(after: line) }
                if line.hasPrefix("nonvoluntary_ctxt_switches:") { involuntary = number(after: line) }
            }
            let cpu = (readText("\(base)/schedstat") ?? "").split(separator: " ").first.flatMap { Int64($0) } ?? 0
            let comm = (readText("\(base)/comm") ?? "").split(separator: "\n").first.map(String.init) ?? ""
            threads.append(Thread(id: id, name: comm, voluntarySwitches: voluntary, involuntarySwitches: involuntary, cpuNanoseconds: cpu))
        }
        return threads.sorted { $0.id < $1.id }
    }

    /// Time on a CPU of all the process's threads now, in nanoseconds (threads that exited do not count).
    public static func cpuNanoseconds(of pid: pid_t) -> Int64 {
        threads(of: pid).reduce(0) { $0 + $1.cpuNanoseconds }
    }

    /// The processor time (user and system) the process has used so far, from `/proc/PID/stat`
    /// (`utime + stime`, in clock ticks), with that of the children it reaped (`cutime + cstime`)
    /// when `includingReapedChildren`; `nil` when it is gone.
    public static func cpuTime(of pid: pid_t, includingReapedChildren: Bool = false) -> Duration? {
        guard let stat = readText("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return nil }
        // Fields after the command: the state is the 3rd field; utime … cstime the 14th … 17th.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 15 else { return nil }
        let ticks = fields[11...(includingReapedChildren ? 14 : 12)].reduce(Int64(0)) { $0 + (Int64($1) ?? 0) }
        return .microseconds(ticks * 1_000_000 / max(1, Int64(sysconf(Int32(_SC_CLK_TCK)))))
    }

    /// A field of `/proc/PID/status` in KiB (`VmRSS`, `RssAnon`, `VmHWM`, …), or 0.
    public static func statusKiB(_ field: String, of pid: pid_t) -> Int64 {
        for line in (readText("/proc/\(pid)/status") ?? "").split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int64(line.split(separator: " ").dropLast().last.map(String.init) ?? "") ?? 0
        }
        return 0
    }

    /// Resets the process's peak resident size (`VmHWM`) to its resident size now, by writing
    /// `5` to `/proc/PID/clear_refs` (Linux 4.0 and later); `false` where that is refused.
    public static func resetPeakResident(of pid: pid_t) -> Bool {
        let descriptor = open("/proc/\(pid)/clear_refs", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return write(descriptor, "5", 1) == 1
    }

    /// The state letter of `/proc/PID/stat` (`R`, `S`, `T`, `Z`, …), or `nil` when it is gone.
    public static func state(of pid: pid_t) -> Character? {
        guard let stat = readText("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return nil }
        return stat[close...].dropFirst(2).first
    }

    /// The number at the end of a `Name:\tvalue` line of a status file, or 0.
    private static func number(after line: Substring) -> Int64 {
        line.split(whereSeparator: { $0 == " " || $0 == "\t" }).last.flatMap { Int64($0) } ?? 0
    }

    /// The whole of a (small) file, read to its end (a `/proc` file says its size is 0), or
    /// `nil` when it cannot be read.
    public static func readText(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count < 0 { return nil }
            if count == 0 { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
