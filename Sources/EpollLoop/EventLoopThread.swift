import CEpollLoop
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A thread that runs an epoll loop: the home of C objects that are not thread-safe.
///
/// Send it work from any thread with `execute` (or `submit`, to await a result); the work runs on
/// the loop thread with the loop's `LoopContext`, through which it registers file descriptors,
/// schedules timers and keeps loop-local state. Several sources can share one loop (the udev
/// power-supply source, and D-Bus connections whose watches and timeouts map onto
/// registrations and timers).
///
/// ```swift
/// let loop = try EventLoopThread(name: "udev")
/// try loop.execute { context in
///     let registration = try? context.register(fileDescriptor: fd, interest: .readable) { events in … }
///     context.scheduleTimer(after: .seconds(60), repeating: .seconds(60)) { … }
/// }
/// …
/// await loop.shutdown()
/// ```
///
/// The handle is `Sendable`; its own state is a `Mutex`-guarded job queue and an eventfd that
/// wakes the loop (written once per batch of jobs, and only while the loop may be asleep: a job
/// queued while it is awake, by its own jobs and handlers say, costs no write). Idle costs
/// nothing: the thread sleeps in `epoll_wait` until a descriptor is ready, a timer is due, or a
/// job arrives.
///
/// Shut it down with `shutdown()` (or `syncShutdown()`); dropping the last reference does the
/// same. Jobs accepted before the shutdown still run; later ones are refused with `.shutDown`.
/// Then everything the loop owns (registrations, timers, loop-local values) is released on the
/// loop thread.
public final class EventLoopThread: Sendable {
    let shared: LoopShared
    private let thread: Mutex<StartedThread?>
    /// The thread's name, as given (the kernel keeps its first 15 bytes).
    public let name: String

    /// Starts a loop thread.
    /// - Throws: `EventLoopError.systemCall` when `epoll_create1`, `eventfd`, `timerfd_create`,
    ///   `epoll_ctl` or `pthread_create` fails.
    public init(name: String = "notifybus-loop") throws(EventLoopError) {
        self.name = name
        let epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epollFD >= 0 else { throw .lastError("epoll_create1") }
        let wakeFD = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard wakeFD >= 0 else {
            let error = EventLoopError.lastError("eventfd")
            close(epollFD)
            throw error
        }
        var clockID = CLOCK_BOOTTIME
        var timerFD = timerfd_create(clockID, Int32(TFD_CLOEXEC | TFD_NONBLOCK))
        if timerFD < 0 {
            clockID = CLOCK_MONOTONIC
            timerFD = timerfd_create(clockID, Int32(TFD_CLOEXEC | TFD_NONBLOCK))
        }
        guard timerFD >= 0 else {
            let error = EventLoopError.lastError("timerfd_create")
            close(wakeFD)
            close(epollFD)
            throw error
        }
        let shared = LoopShared(epollFD: epollFD, wakeFD: wakeFD, timerFD: timerFD, clockID: clockID)
        for (fd, token) in [(wakeFD, LoopContext.wakeToken), (timerFD, LoopContext.timerToken)] {
            var event = epoll_event()
            event.events = EPOLLIN.rawValue
            event.data.u64 = token
            if epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) != 0 { throw .lastError("epoll_ctl") }
        }

        let threadName = String(name.utf8.prefix(15)) ?? "notifybus-loop"
        let handle = try startThread {
            _ = notifybus_set_thread_name(threadName)
            shared.loopThreadID.store(UInt(pthread_self()), ordering: .releasing)
            LoopContext(shared: shared).run()
        }
        self.shared = shared
        self.thread = Mutex(handle)
    }

    deinit {
        if shared.queue.withLock({ $0.requestStop() }) { shared.wake() }
        join()
    }

    /// Runs `job` on the loop thread, after the jobs sent before it, and returns at once.
    ///
    /// Called on the loop thread itself, the job still waits for the next round (it never runs
    /// inside the caller), which then polls its descriptors instead of sleeping; that costs no
    /// eventfd write.
    /// - Throws: `EventLoopError.shutDown` once a shutdown was asked for (or the loop failed).
    public func execute(_ job: @escaping @Sendable (LoopContext) -> Void) throws(EventLoopError) {
        let wake = try shared.queue.withLock { $0.enqueue(job) }.get()
        if wake { shared.wake() }
    }

    /// Runs `job` on the loop thread and returns its result.
    /// - Throws: `EventLoopError.shutDown` when the loop no longer accepts work.
    public func submit<Result: Sendable>(
        _ job: @escaping @Sendable (LoopContext) -> Result
    ) async throws(EventLoopError) -> Result {
        let outcome: Swift.Result<Result, EventLoopError> = await withCheckedContinuation { continuation in
            do throws(EventLoopError) {
                try execute { context in continuation.resume(returning: .success(job(context))) }
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        return try outcome.get()
    }

    /// Whether the caller runs on this loop's thread.
    public var isLoopThread: Bool { shared.isLoopThread }

    /// Whether the loop still accepts work.
    public var isRunning: Bool { shared.queue.withLock { $0.phase == .running } }

    /// Stops the loop and waits until its thread has released everything and ended.
    ///
    /// Jobs accepted before this call still run. Calling it again (or after the loop stopped)
    /// returns once the loop has stopped.
    public func shutdown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (wake, stopped) = shared.queue.withLock { queue -> (Bool, Bool) in
                if queue.phase == .stopped { return (false, true) }
                queue.exitWaiters.append(continuation)
                return (queue.requestStop(), false)
            }
            if stopped { continuation.resume() }
            if wake { shared.wake() }
        }
        join()
    }

    /// Stops the loop and blocks until its thread has ended (from the loop thread itself: asks
    /// it to stop after the current job and returns at once).
    public func syncShutdown() {
        if shared.queue.withLock({ $0.requestStop() }) { shared.wake() }
        join()
    }

    /// Joins the thread (once); from the loop thread itself, detaches it instead.
    private func join() {
        guard let handle = thread.withLock({ handle -> StartedThread? in
            defer { handle = nil }
            return handle
        }) else { return }
        if shared.isLoopThread {
            handle.detach()
        } else {
            handle.join()
        }
    }
}
