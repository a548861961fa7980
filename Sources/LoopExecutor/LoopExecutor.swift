// `SchedulingExecutor`, through which Swift 6.3's `Task.sleep(for:)` and the clocks' `sleep` find
// where to wait, is still experimental (SPI) in 6.3.
@_spi(ExperimentalScheduling) import _Concurrency
import CConcurrencyHook
import EpollLoop
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Swift concurrency's global executor on the project's own epoll loops (`EventLoopThread`): a
/// `TaskExecutor` (and `SchedulingExecutor`) whose jobs run on loop threads.
///
/// On Linux the default global executor is libdispatch's root queues, whose worker-pool monitor
/// arms a one-second timer on first use and never cancels it, and `Task.sleep` schedules with
/// `dispatch_after`, which starts that pool too: a program idle on them wakes every second. Here
/// every global job, and every delayed one, goes to a loop thread that sleeps in `epoll_wait` until
/// a job arrives or one of its timerfd timers is due, so an idle program wakes for nothing.
///
/// ## Threads
/// Two loop threads (`notifybus-exec0`, `notifybus-exec1`), one on a single core. The programs'
/// tasks mostly wait on the sources' own loops and do little work each, so one thread would
/// carry them; with two, a job that blocks for a while (a file read, a synchronous call into a
/// library) stalls only the jobs queued on its thread, and the tasks sent to the other keep
/// running. Idle threads cost no wake-ups, but a thread per core (eight on a phone) would only
/// add stacks and hand-offs between them.
///
/// A job enqueued on one of these threads (the continuation of a task that runs there, a task it
/// starts, a task group's child) runs on that same thread, after the events of the current round:
/// the loop is awake, so that costs no eventfd write. A job from any other thread goes to the two
/// in turn.
///
/// ## Delays
/// In Swift 6.3, `Task.sleep(for:)`, `Task.sleep(until:clock:)` and the clocks' `sleep` ask the
/// current task's executor for a `SchedulingExecutor` and fall back to the default one
/// (libdispatch's), never to the runtime's hooks: so this executor is a `SchedulingExecutor` (SPI
/// in 6.3, `@_spi(ExperimentalScheduling)`; the Swift Evolution pitch "Delayed Enqueuing for
/// Executors", swift-evolution pull request 3038).
/// `Task.sleep(nanoseconds:)` still goes through the runtime's delayed-enqueue hook, and older
/// runtimes' `Task.sleep` through its deadline hook (a deadline on `ContinuousClock`,
/// `CLOCK_BOOTTIME`, or `SuspendingClock`, `CLOCK_MONOTONIC`), so both are hooked too. Each delay
/// becomes a timer of a loop (`LoopContext.scheduleTimer`), which runs the job on that loop's
/// thread when it fires. The loops' timers run on `CLOCK_BOOTTIME`, so a deadline on
/// `SuspendingClock` is taken as the time left until it when it is scheduled, and time the system
/// spends suspended counts towards it. Tolerances are not used (the timers fire at their
/// deadline). A clock whose `Duration` is not `Swift.Duration` goes to the default executor.
/// A cancelled `Task.sleep` resumes its task at once, but the runtime leaves the job that would
/// have ended the sleep scheduled, and the executor cannot tell it from any other: its timer
/// still fires at the deadline, one wake-up for nothing. Where that matters (a timeout that is
/// usually cancelled), wait with `EventLoopThread.sleep(for:)`, which cancels its timer.
///
/// ## The hook
/// `install()` sets the runtime's `swift_task_enqueueGlobal_hook`,
/// `swift_task_enqueueGlobalWithDelay_hook` and `swift_task_enqueueGlobalWithDeadline_hook` by
/// their addresses (`CConcurrencyHook`), which the link resolves also where the runtime is linked
/// statically (`--static-swift-stdlib` links it with `--exclude-libs ALL`, so `dlsym` cannot find
/// the hooks). Swift 6.3's `ExecutorFactory` (a program's own main and default executors, chosen
/// with `-executor-factory`; the Swift Evolution pitch "Custom Main and Global Executors") is
/// still `@_spi(ExperimentalCustomExecutors)` in its `_Concurrency` module; once it is public,
/// `LoopTaskExecutor` can be the factory's `defaultExecutor` and the hooks and their C shim can go
/// (and the SPI import, once `SchedulingExecutor` is public).
package enum LoopExecutor {
    /// Makes the shared executor Swift concurrency's global executor, delays included.
    ///
    /// Call it first thing in `main`, before any task is created. Returns false, changing
    /// nothing, when a global executor is installed already (this one, or another through the
    /// same hook), or when the executor's threads could not start.
    @discardableResult
    package static func install() -> Bool {
        guard !notifybus_global_executor_is_set(), LoopTaskExecutor.shared != nil else { return false }
        return notifybus_install_global_executor(
            notifybus_global_executor(
                enqueue: { job in
                    LoopTaskExecutor.shared?.schedule(unsafeBitCast(job, to: UnownedJob.self)) ?? false
                },
                enqueue_after: { nanoseconds, job in
                    LoopTaskExecutor.shared?.schedule(unsafeBitCast(job, to: UnownedJob.self), after: nanoseconds) ?? false
                },
                enqueue_at: { seconds, nanoseconds, clock, job in
                    LoopTaskExecutor.shared?.schedule(
                        unsafeBitCast(job, to: UnownedJob.self), atSeconds: seconds, nanoseconds: nanoseconds, clock: clock
                    ) ?? false
                }
            ))
    }

    /// The names of the executor's threads (`/proc/self/task/*/comm`); empty when they could not start.
    package static var threadNames: [String] { LoopTaskExecutor.shared?.threadNames ?? [] }
}

/// The executor itself: a job goes to a loop with `EventLoopThread.execute`, a delayed one to a
/// timer of a loop, and runs there with `ExecutorJob.runSynchronously(on:)` on this task executor.
final class LoopTaskExecutor: TaskExecutor, SchedulingExecutor {
    /// The executor `LoopExecutor.install()` installs, its threads started on first use; `nil`
    /// when they could not start (no descriptors or threads left).
    static let shared: LoopTaskExecutor? = try? LoopTaskExecutor(threadCount: defaultThreadCount)

    /// Two, or one on a single core.
    static var defaultThreadCount: Int {
        min(2, max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
    }

    private let loops: [EventLoopThread]
    /// Which loop a job from elsewhere goes to next.
    private let next = Atomic<UInt>(0)

    /// The names of its loop threads, as the kernel shows them (`/proc/self/task/*/comm`).
    var threadNames: [String] { loops.map(\.name) }

    init(threadCount: Int) throws(EventLoopError) {
        var loops: [EventLoopThread] = []
        for index in 0..<max(1, threadCount) {
            loops.append(try EventLoopThread(name: "notifybus-exec\(index)"))
        }
        self.loops = loops
    }

    /// Runs `job` on one of the loop threads (the caller's own, if it is one).
    ///
    /// Should every loop have stopped, which happens only when `epoll_wait` fails on its own
    /// descriptors, the job runs on the caller's thread rather than never.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if !schedule(job) { job.runSynchronously(on: asUnownedTaskExecutor()) }
    }

    /// Runs `job` after `delay` on `clock` (see "Delays"), from a timer of a loop.
    func enqueue<C: Clock>(_ job: consuming ExecutorJob, after delay: C.Duration, tolerance: C.Duration?, clock: C) {
        guard let delay = delay as? Duration else {
            Self.fallBack(job, at: clock.now.advanced(by: delay), tolerance: tolerance, clock: clock)
            return
        }
        enqueue(job, afterNanoseconds: Self.nanoseconds(delay))
    }

    /// Runs `job` at `instant` of `clock` (see "Delays"), from a timer of a loop.
    func enqueue<C: Clock>(_ job: consuming ExecutorJob, at instant: C.Instant, tolerance: C.Duration?, clock: C) {
        guard let delay = clock.now.duration(to: instant) as? Duration else {
            Self.fallBack(job, at: instant, tolerance: tolerance, clock: clock)
            return
        }
        enqueue(job, afterNanoseconds: Self.nanoseconds(delay))
    }

    /// Runs `job` after `nanoseconds`; should every loop have stopped, now on the caller's thread
    /// (the sleep ends early rather than never).
    private func enqueue(_ job: consuming ExecutorJob, afterNanoseconds nanoseconds: UInt64) {
        let job = UnownedJob(job)
        if !schedule(job, after: nanoseconds) { job.runSynchronously(on: asUnownedTaskExecutor()) }
    }

    /// A deadline of a clock whose durations are not `Duration`: the default executor's (which
    /// the hooks do not replace). Were that no `SchedulingExecutor`, the job runs now rather than never.
    private static func fallBack<C: Clock>(_ job: consuming ExecutorJob, at instant: C.Instant, tolerance: C.Duration?, clock: C) {
        if let fallback = globalConcurrentExecutor as? any SchedulingExecutor {
            fallback.enqueue(job, at: instant, tolerance: tolerance, clock: clock)
        } else {
            UnownedJob(job).runSynchronously(on: globalConcurrentExecutor.asUnownedTaskExecutor())
        }
    }

    /// Sends `job` to a loop; returns false when no loop takes it.
    func schedule(_ job: UnownedJob) -> Bool {
        let executor = asUnownedTaskExecutor()
        return send { _ in job.runSynchronously(on: executor) }
    }

    /// Runs `job` after `nanoseconds`, from a timer of a loop.
    func schedule(_ job: UnownedJob, after nanoseconds: UInt64) -> Bool {
        guard nanoseconds > 0 else { return schedule(job) }
        let executor = asUnownedTaskExecutor()
        let delay = Duration.nanoseconds(Int64(clamping: nanoseconds))
        return send { context in
            context.scheduleTimer(after: delay) { job.runSynchronously(on: executor) }
        }
    }

    /// Runs `job` at a deadline of the runtime's clock `clock` (1: continuous, 2: suspending);
    /// returns false for another clock.
    func schedule(_ job: UnownedJob, atSeconds seconds: Int64, nanoseconds: Int64, clock: Int32) -> Bool {
        let clockID: clockid_t
        switch clock {
        case 1: clockID = CLOCK_BOOTTIME
        case 2: clockID = CLOCK_MONOTONIC
        default: return false
        }
        var now = timespec()
        clock_gettime(clockID, &now)
        let deadline = Self.nanoseconds(seconds: seconds, nanoseconds: nanoseconds)
        let current = Self.nanoseconds(seconds: Int64(now.tv_sec), nanoseconds: Int64(now.tv_nsec))
        let (left, overflow) = deadline.subtractingReportingOverflow(current)
        if overflow { return schedule(job, after: deadline > 0 ? UInt64(Int64.max) : 0) }
        return schedule(job, after: left > 0 ? UInt64(left) : 0)
    }

    /// A `Duration` as a delay in nanoseconds: 0 for none or a negative one, saturated at `Int64.max`.
    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 0 }
        let (scaled, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return UInt64(Int64.max) }
        return min(scaled &+ UInt64(attoseconds / 1_000_000_000), UInt64(Int64.max))
    }

    /// Seconds and nanoseconds as nanoseconds, saturated at the bounds of `Int64`.
    private static func nanoseconds(seconds: Int64, nanoseconds: Int64) -> Int64 {
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflowed) = scaled.addingReportingOverflow(nanoseconds)
        if overflowed { return nanoseconds < 0 ? .min : .max }
        return sum
    }

    /// Sends `work` to the caller's loop if it runs on one, else to the next in turn; to another
    /// loop if that one has stopped. Returns false when none takes it.
    private func send(_ work: @escaping @Sendable (LoopContext) -> Void) -> Bool {
        let first = loops.first(where: \.isLoopThread)
            ?? loops[Int(next.wrappingAdd(1, ordering: .relaxed).oldValue % UInt(loops.count))]
        if (try? first.execute(work)) != nil { return true }
        for loop in loops where loop !== first {
            if (try? loop.execute(work)) != nil { return true }
        }
        return false
    }
}

