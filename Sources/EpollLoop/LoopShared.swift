import CEpollLoop
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What a loop's handle (`EventLoopThread`, any thread) and the loop thread share.
///
/// Only `Sendable` things: three descriptors fixed at creation, the job queue behind a `Mutex`,
/// and the loop thread's id. The descriptors are closed when the last of the two sides lets go,
/// so no thread can write to the eventfd after it is closed.
final class LoopShared: Sendable {
    let epollFD: Int32
    let wakeFD: Int32
    let timerFD: Int32
    /// The clock of the timerfd and of timer deadlines (`CLOCK_BOOTTIME`, else `CLOCK_MONOTONIC`).
    let clockID: clockid_t
    let queue = Mutex(JobQueue())
    /// `pthread_self()` of the loop thread, 0 until it has started.
    let loopThreadID = Atomic<UInt>(0)

    init(epollFD: Int32, wakeFD: Int32, timerFD: Int32, clockID: clockid_t) {
        self.epollFD = epollFD
        self.wakeFD = wakeFD
        self.timerFD = timerFD
        self.clockID = clockID
    }

    deinit {
        close(timerFD)
        close(wakeFD)
        close(epollFD)
    }

    /// Makes the loop's `epoll_wait` return (write to the eventfd).
    func wake() {
        var one: UInt64 = 1
        // EAGAIN would mean the counter is saturated: the loop is already due to wake.
        _ = write(wakeFD, &one, MemoryLayout<UInt64>.size)
    }

    /// Whether the caller runs on the loop thread.
    var isLoopThread: Bool {
        let id = loopThreadID.load(ordering: .acquiring)
        return id != 0 && id == UInt(pthread_self())
    }
}

/// A job sent to the loop from any thread.
typealias LoopJob = @Sendable (LoopContext) -> Void

/// The cross-thread state of a loop, a plain state machine kept behind `LoopShared.queue`.
///
/// `running` → `stopping` (a shutdown was asked for: no more jobs are accepted; the loop runs
/// the jobs it accepted, releases what it owns and exits) → `stopped`.
struct JobQueue {
    enum Phase: Equatable { case running, stopping, stopped }

    var phase = Phase.running
    var jobs: [LoopJob] = []
    /// Whether the eventfd was written since the loop last took the jobs (to write it once).
    var wakePending = false
    /// Whether the loop thread is awake and looks at the queue before it sleeps again: a job
    /// queued then needs no eventfd write (the common case of a job queued by the loop's own
    /// jobs and handlers). Cleared by `prepareToSleep()`, set again when `epoll_wait` returns.
    var loopAwake = true
    /// Tasks waiting in `EventLoopThread.shutdown()`.
    var exitWaiters: [CheckedContinuation<Void, Never>] = []
    /// Why the loop stopped by itself, if it did.
    var failure: EventLoopError?

    /// Queues `job`. Returns whether the caller must wake the loop.
    mutating func enqueue(_ job: @escaping LoopJob) -> Result<Bool, EventLoopError> {
        guard phase == .running else { return .failure(failure ?? .shutDown) }
        jobs.append(job)
        return .success(needsWake())
    }

    /// Asks the loop to stop. Returns whether the caller must wake the loop.
    mutating func requestStop() -> Bool {
        guard phase == .running else { return false }
        phase = .stopping
        return needsWake()
    }

    /// Whether whoever changed the queue must write the eventfd (once, and only to a loop that
    /// may be asleep).
    private mutating func needsWake() -> Bool {
        if wakePending || loopAwake { return false }
        wakePending = true
        return true
    }

    /// The loop is about to wait (`sleeping`: with no timeout). Returns whether jobs or a stop
    /// wait for it, to run after a poll; when none do and it will sleep, marks it asleep.
    mutating func prepareToWait(sleeping: Bool) -> Bool {
        if !jobs.isEmpty || phase != .running { return true }
        if sleeping { loopAwake = false }
        return false
    }

    /// Takes every queued job, and whether the loop should stop after running them.
    mutating func takeJobs() -> (jobs: [LoopJob], stop: Bool) {
        wakePending = false
        let taken = jobs
        jobs = []
        return (taken, phase != .running)
    }

    /// Marks the loop stopped, recording `failure` if it stopped by itself; returns the waiters to resume.
    mutating func finish(failure: EventLoopError?) -> [CheckedContinuation<Void, Never>] {
        phase = .stopped
        if let failure { self.failure = failure }
        let waiters = exitWaiters
        exitWaiters = []
        return waiters
    }
}
