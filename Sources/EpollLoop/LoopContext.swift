import CEpollLoop
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The running loop, as seen from its own thread: file-descriptor registrations
/// (`LoopContext+Registrations.swift`), timers (`LoopContext+Timers.swift`), deferred work and
/// loop-local storage (`LoopContext+Storage.swift`).
///
/// You never create one: an `EventLoopThread` makes it on its thread and passes it to every job
/// (`EventLoopThread.execute`), and handlers registered here run on that same thread.
///
/// ## Why this is safe without locks
/// A `LoopContext` is not `Sendable` (the conformance is explicitly unavailable), and the only
/// way to get one is as the argument of a job or a handler that runs on the loop thread. The
/// compiler therefore keeps it, and everything reachable only from it (handlers, timers, the
/// values in its storage), on that thread: a `@Sendable` job cannot capture it or any of those
/// non-`Sendable` values, and nothing `Sendable` can carry them out. Cross-thread traffic goes
/// through `EventLoopThread`, whose state is behind a `Mutex`. That is why non-thread-safe C
/// objects (libudev, libdbus) can live here: they are created, used and released on this thread.
///
/// ## Handlers
/// Handlers run one at a time, in the order epoll and the timer reported them; a handler that
/// blocks stalls the loop. They may register, change, deregister and schedule freely, their own
/// registration included. Readiness can be spurious (use non-blocking descriptors and expect
/// `EAGAIN`). A registration that is told `.error` or `.hangup` and keeps watching the descriptor
/// is called again at once, so handle those by deregistering or disabling it.
///
/// Idle means asleep: with nothing ready and no timer due, the thread waits in `epoll_wait`
/// with no timeout; the timerfd is armed only for the earliest pending timer, which a heap of
/// deadlines names.
public final class LoopContext {
    let shared: LoopShared

    var nextID: UInt64 = 1
    var registrations: [UInt64: Registration] = [:]
    var descriptors: [Int32: WatchedDescriptor] = [:]
    var timers = TimerQueue<() -> Void>()
    var timersChanged = false
    var armedDeadline: UInt64?
    var soon: [() -> Void] = []
    var locals: [UInt64: Any] = [:]
    var isTornDown = false

    static let wakeToken = UInt64.max
    static let timerToken = UInt64.max - 1

    init(shared: LoopShared) {
        self.shared = shared
    }

    func makeID() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }

    // MARK: The loop

    /// Runs until a shutdown is asked for (or epoll fails), then releases everything it owns.
    func run() {
        var events = [epoll_event](repeating: epoll_event(), count: 64)
        var failure: EventLoopError?
        running: while true {
            if timersChanged { rearmTimer() }
            // Jobs queued while the loop was awake came without an eventfd write: they make this
            // round's wait a poll, and run after its events.
            let sleeping = soon.isEmpty
            let jobsWaiting = shared.queue.withLock { $0.prepareToWait(sleeping: sleeping) }
            let count: Int
            do {
                count = try waitForEvents(into: &events, timeout: sleeping && !jobsWaiting ? -1 : 0)
            } catch {
                failure = error
                break running
            }
            shared.queue.withLock { $0.loopAwake = true }
            for index in 0..<count {
                let token = events[index].data.u64
                let mask = events[index].events
                switch token {
                case Self.wakeToken:
                    drain(shared.wakeFD)
                    if runJobs() { break running }
                case Self.timerToken:
                    drain(shared.timerFD)
                    fireDueTimers()
                default:
                    dispatch(fd: Int32(bitPattern: UInt32(truncatingIfNeeded: token)), mask: mask)
                }
            }
            if jobsWaiting && runJobs() { break running }
            runSoonWork()
        }
        if failure != nil {
            // Stop accepting work, and run what was accepted so no submitter waits forever.
            _ = shared.queue.withLock { $0.requestStop() }
            _ = runJobs()
        }
        tearDown()
        let waiters = shared.queue.withLock { $0.finish(failure: failure) }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits for events (`timeout` in milliseconds, -1 for none), and waits again when a signal
    /// interrupts the wait (`EINTR`). Wraps `epoll_wait`.
    /// - Returns: how many entries of `events` were filled.
    private func waitForEvents(into events: inout [epoll_event], timeout: Int32) throws(EventLoopError) -> Int {
        while true {
            let count = events.withUnsafeMutableBufferPointer {
                epoll_wait(shared.epollFD, $0.baseAddress, Int32($0.count), timeout)
            }
            if count >= 0 { return Int(count) }
            if errno != EINTR { throw .lastError("epoll_wait") }
        }
    }

    /// Runs the queued jobs; returns whether the loop should stop.
    private func runJobs() -> Bool {
        let (jobs, stop) = shared.queue.withLock { $0.takeJobs() }
        for job in jobs { job(self) }
        return stop
    }

    /// Releases registrations, timers and storage, on this thread.
    private func tearDown() {
        isTornDown = true
        for (fd, watched) in descriptors where watched.epollMask != nil {
            var event = epoll_event()
            _ = epoll_ctl(shared.epollFD, EPOLL_CTL_DEL, fd, &event)
        }
        // Move everything out first: deinits that run while these are released may call back
        // into the context (to deregister, say) and must find it empty.
        let storage = locals
        locals = [:]
        let handlers = (registrations, timers.removeAll(), soon)
        registrations = [:]
        descriptors = [:]
        soon = []
        withExtendedLifetime((storage, handlers)) {}
    }

    private func drain(_ fd: Int32) {
        var counter: UInt64 = 0
        _ = read(fd, &counter, MemoryLayout<UInt64>.size)
    }
}

@available(*, unavailable, message: "a LoopContext stays on its loop thread; send jobs through EventLoopThread")
extension LoopContext: Sendable {}
