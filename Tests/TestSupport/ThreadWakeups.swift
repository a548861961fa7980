import Harness

#if canImport(Glibc)
public import Glibc
#endif

/// When each thread of a process woke over a window: its voluntary context switches
/// (`/proc/PID/task/TID/status`), sampled once a second, per thread and per second.
///
/// A thread that sleeps in `epoll_wait`, `poll` or a futex until something arrives switches
/// voluntarily once per wake-up; one that never wakes keeps its count. Threads that start or end
/// during the window are listed with what they did while they were seen.
public struct ThreadWakeups: Sendable, CustomStringConvertible {
    /// One wake-up (or several within a second) of one thread.
    public struct Wake: Sendable, Hashable {
        /// `comm` and id, e.g. `notifywatch (1234)`.
        public var thread: String
        /// Seconds since `origin` at the sample that saw it (the wake came in the second before).
        public var second: Int
        /// Voluntary switches in that second.
        public var count: Int64
    }

    /// What woke, in the order of the samples.
    public private(set) var wakes: [Wake] = []
    /// The threads at the window's start.
    public private(set) var threads: [String] = []
    /// The threads that started within the window (their switches count from 0).
    public private(set) var started: [String] = []
    /// The threads that ended within the window (their last second is not counted).
    public private(set) var ended: [String] = []
    /// Whether the process was still there at the window's end.
    public private(set) var alive = true

    /// Every thread's voluntary switches in the window.
    public var total: Int64 { wakes.reduce(0) { $0 + $1.count } }

    /// Samples `pid` once a second from `origin + settle` for `window`, then returns what woke.
    /// Sleeps with `Task.sleep`: call it from a test, not from the process measured.
    public static func record(
        pid: pid_t, origin: ContinuousClock.Instant, settle: Duration = .seconds(4), window: Duration = .seconds(60)
    ) async -> ThreadWakeups {
        var result = ThreadWakeups()
        try? await Task.sleep(until: origin + settle, clock: .continuous)
        var last = Dictionary(uniqueKeysWithValues: ProcessStats.threads(of: pid).map { ($0.id, $0) })
        result.threads = last.values.sorted { $0.id < $1.id }.map(Self.name)
        let seconds = Int(window.components.seconds)
        for step in 1...max(1, seconds) {
            try? await Task.sleep(until: origin + settle + .seconds(step), clock: .continuous)
            let now = ProcessStats.threads(of: pid)
            if now.isEmpty {
                result.alive = false
                break
            }
            let second = Int((settle + .seconds(step)).components.seconds)
            for thread in now {
                let before = last[thread.id]?.voluntarySwitches ?? 0
                if last[thread.id] == nil { result.started.append(Self.name(thread)) }
                if thread.voluntarySwitches > before {
                    result.wakes.append(Wake(thread: Self.name(thread), second: second, count: thread.voluntarySwitches - before))
                }
            }
            let present = Set(now.map(\.id))
            result.ended += last.values.filter { !present.contains($0.id) }.map(Self.name)
            last = Dictionary(uniqueKeysWithValues: now.map { ($0.id, $0) })
        }
        return result
    }

    private static func name(_ thread: ProcessStats.Thread) -> String { "\(thread.name) (\(thread.id))" }

    /// `"notifywatch (1234) at 31 s: 2; …"`, with the threads that started or ended, or "no wake-up".
    public var description: String {
        var parts = wakes.map { "\($0.thread) at \($0.second) s: \($0.count)" }
        if !started.isEmpty { parts.append("started: " + started.joined(separator: ", ")) }
        if !ended.isEmpty { parts.append("ended: " + ended.joined(separator: ", ")) }
        if !alive { parts.append("the process exited") }
        return parts.isEmpty ? "no wake-up (threads: \(threads.joined(separator: ", ")))" : parts.joined(separator: "; ")
    }
}
