import CEpollLoop
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The running loop, as seen from its own thread: file-descriptor registrations, timers,
/// deferred work and loop-local storage.
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
/// with no timeout; the timerfd is armed only for the earliest pending timer.
public final class LoopContext {
    let shared: LoopShared

    private struct Registration {
        let fd: Int32
        var interest: IOEvents
        var enabled: Bool
        let handler: (IOEvents) -> Void
    }

    private struct WatchedDescriptor {
        /// Registrations on this descriptor, in registration order.
        var registrations: [UInt64] = []
        /// The interest mask given to epoll; `nil` when the descriptor is not in the epoll set.
        var epollMask: UInt32?
    }

    private struct TimerEntry {
        var deadline: UInt64
        let interval: UInt64?
        let handler: () -> Void
    }

    private var nextID: UInt64 = 1
    private var registrations: [UInt64: Registration] = [:]
    private var descriptors: [Int32: WatchedDescriptor] = [:]
    private var timers: [UInt64: TimerEntry] = [:]
    private var timersChanged = false
    private var armedDeadline: UInt64?
    private var soon: [() -> Void] = []
    private var locals: [UInt64: Any] = [:]
    private var isTornDown = false

    static let wakeToken = UInt64.max
    static let timerToken = UInt64.max - 1
    static let shortestInterval: UInt64 = 1_000_000  // 1 ms

    init(shared: LoopShared) {
        self.shared = shared
    }

    // MARK: File descriptors

    /// Watches `fileDescriptor` and calls `handler` on this thread when it is ready for what
    /// `interest` names (and on `.error`/`.hangup`).
    ///
    /// Several registrations may share a descriptor (libdbus, for one, adds separate read and
    /// write watches on its socket); the loop gives epoll the union of the enabled ones and calls
    /// each registration only for the events it asked for. Deregister before closing the
    /// descriptor. Wraps `epoll_ctl`.
    /// - Parameters:
    ///   - interest: `.readable`, `.writable` or both; other members are ignored.
    ///   - enabled: a disabled registration is kept but not watched (see `setEnabled(_:for:)`).
    /// - Throws: `EventLoopError.systemCall` from `epoll_ctl` (e.g. `EPERM` for a regular file,
    ///   `EBADF` for a closed descriptor); `.shutDown` once the loop is shutting down.
    public func register(
        fileDescriptor: Int32, interest: IOEvents, enabled: Bool = true,
        handler: @escaping (IOEvents) -> Void
    ) throws(EventLoopError) -> IORegistration {
        guard !isTornDown else { throw .shutDown }
        let id = makeID()
        registrations[id] = Registration(
            fd: fileDescriptor, interest: interest.intersection([.readable, .writable]),
            enabled: enabled, handler: handler)
        descriptors[fileDescriptor, default: WatchedDescriptor()].registrations.append(id)
        do {
            try updateEpoll(for: fileDescriptor)
        } catch {
            removeRegistration(id)
            throw error
        }
        return IORegistration(id: id, fileDescriptor: fileDescriptor)
    }

    /// Changes what `registration` waits for. Wraps `epoll_ctl`.
    public func setInterest(_ interest: IOEvents, for registration: IORegistration) throws(EventLoopError) {
        guard var entry = registrations[registration.id] else { throw .unknownHandle }
        entry.interest = interest.intersection([.readable, .writable])
        registrations[registration.id] = entry
        try updateEpoll(for: entry.fd)
    }

    /// Starts (`true`) or stops (`false`) watching for `registration` without forgetting it;
    /// libdbus's `dbus_watch_get_enabled` maps onto this. Wraps `epoll_ctl`.
    public func setEnabled(_ enabled: Bool, for registration: IORegistration) throws(EventLoopError) {
        guard var entry = registrations[registration.id] else { throw .unknownHandle }
        guard entry.enabled != enabled else { return }
        entry.enabled = enabled
        registrations[registration.id] = entry
        try updateEpoll(for: entry.fd)
    }

    /// Ends `registration`: its handler is not called again, not even for events already
    /// reported in the current round. Unknown or ended registrations are ignored.
    public func deregister(_ registration: IORegistration) {
        guard let entry = registrations[registration.id] else { return }
        removeRegistration(registration.id)
        // The descriptor may already be closed; then the kernel has dropped it from the set.
        try? updateEpoll(for: entry.fd)
    }

    private func removeRegistration(_ id: UInt64) {
        guard let entry = registrations.removeValue(forKey: id) else { return }
        descriptors[entry.fd]?.registrations.removeAll { $0 == id }
    }

    /// Gives epoll the union of the enabled registrations' interest in `fd`.
    private func updateEpoll(for fd: Int32) throws(EventLoopError) {
        guard var watched = descriptors[fd] else { return }
        var mask: UInt32 = 0
        for id in watched.registrations {
            if let entry = registrations[id], entry.enabled { mask |= entry.interest.epollInterest }
        }
        var operation: Int32
        switch (watched.epollMask, mask) {
        case (nil, 0):
            if watched.registrations.isEmpty { descriptors[fd] = nil }
            return
        case (nil, _): operation = EPOLL_CTL_ADD
        case (_?, 0): operation = EPOLL_CTL_DEL
        case (let current?, _) where current == mask: return
        default: operation = EPOLL_CTL_MOD
        }
        var event = epoll_event()
        event.events = mask
        event.data.u64 = UInt64(UInt32(bitPattern: fd))
        var result = epoll_ctl(shared.epollFD, operation, fd, &event)
        var code = errno
        if result != 0 && code == ENOENT && operation == EPOLL_CTL_MOD {
            // The descriptor was closed (leaving the set) and its number reused: add it anew.
            operation = EPOLL_CTL_ADD
            result = epoll_ctl(shared.epollFD, operation, fd, &event)
            code = errno
        }
        if operation == EPOLL_CTL_DEL {
            // ENOENT/EBADF: the descriptor was closed, and so already left the set.
            watched.epollMask = nil
        } else if result == 0 {
            watched.epollMask = mask
        }
        descriptors[fd] = watched.registrations.isEmpty && watched.epollMask == nil ? nil : watched
        if result != 0 && operation != EPOLL_CTL_DEL {
            throw .systemCall(operation: "epoll_ctl", errno: code)
        }
    }

    private func dispatch(fd: Int32, mask: UInt32) {
        let events = IOEvents(epollEvents: mask)
        guard let ids = descriptors[fd]?.registrations else { return }
        for id in ids {
            guard let entry = registrations[id], entry.enabled else { continue }
            let relevant = events.intersection(entry.interest.union([.error, .hangup]))
            if !relevant.isEmpty { entry.handler(relevant) }
        }
    }

    // MARK: Timers

    /// Calls `handler` on this thread after `delay`, and then every `interval` if one is given,
    /// until cancelled. One-shot timers end after firing.
    ///
    /// Timers run on `CLOCK_BOOTTIME` (where the kernel has it), so time spent in system sleep
    /// counts: a timer that fell due during sleep fires right after the wake-up. A repeating timer
    /// that falls behind skips the missed periods instead of firing for each. Intervals shorter
    /// than 1 ms are taken as 1 ms. The loop arms its one timerfd for the earliest timer only.
    /// - Returns: the timer, to cancel it; a timer scheduled after shutdown never fires.
    @discardableResult
    public func scheduleTimer(
        after delay: Duration, repeating interval: Duration? = nil, handler: @escaping () -> Void
    ) -> LoopTimer {
        let id = makeID()
        guard !isTornDown else { return LoopTimer(id: id) }
        let deadline = now() &+ Self.nanoseconds(delay)
        let period = interval.map { max(Self.nanoseconds($0), Self.shortestInterval) }
        timers[id] = TimerEntry(deadline: deadline, interval: period, handler: handler)
        timersChanged = true
        return LoopTimer(id: id)
    }

    /// Cancels `timer`: its handler is not called again. Ended or unknown timers are ignored.
    public func cancelTimer(_ timer: LoopTimer) {
        if timers.removeValue(forKey: timer.id) != nil { timersChanged = true }
    }

    /// Whether `timer` is still scheduled (a one-shot timer that fired, or a cancelled one, is not).
    public func isScheduled(_ timer: LoopTimer) -> Bool { timers[timer.id] != nil }

    private func fireDueTimers() {
        let now = now()
        let due = timers.filter { $0.value.deadline <= now }
            .sorted { ($0.value.deadline, $0.key) < ($1.value.deadline, $1.key) }
            .map(\.key)
        for id in due {
            // An earlier handler may have cancelled this one.
            guard var entry = timers[id], entry.deadline <= now else { continue }
            if let interval = entry.interval {
                var next = entry.deadline &+ interval
                if next <= now { next = now &+ interval }
                entry.deadline = next
                timers[id] = entry
            } else {
                timers[id] = nil
            }
            timersChanged = true
            entry.handler()
        }
    }

    /// Arms the timerfd for the earliest deadline, or disarms it when there is no timer.
    private func rearmTimer() {
        timersChanged = false
        let earliest = timers.values.lazy.map(\.deadline).min()
        guard earliest != armedDeadline else { return }
        var spec = itimerspec()
        if let earliest {
            // Zero would disarm; a deadline in the past fires at once.
            let value = max(earliest, 1)
            spec.it_value.tv_sec = Int(value / 1_000_000_000)
            spec.it_value.tv_nsec = Int(value % 1_000_000_000)
        }
        if timerfd_settime(shared.timerFD, Int32(TFD_TIMER_ABSTIME), &spec, nil) == 0 {
            armedDeadline = earliest
        } else {
            // Should not happen with a valid descriptor and time; try again next round.
            armedDeadline = nil
            timersChanged = true
        }
    }

    private func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(shared.clockID, &spec)
        return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    }

    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 0 }
        if seconds >= Int64(UInt64.max / 1_000_000_000) - 1 { return UInt64.max / 2 }
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }

    // MARK: Deferred work and storage

    /// Runs `work` on this thread after the events of the current round are handled, before the
    /// loop sleeps again (libdbus's "dispatch soon" maps onto this).
    public func runSoon(_ work: @escaping () -> Void) {
        guard !isTornDown else { return }
        soon.append(work)
    }

    /// The value this loop keeps for `key`; assign `nil` to release it. Values are released on
    /// this thread when the loop shuts down, so `deinit`s that free C objects run here too.
    public subscript<Value>(local key: LoopLocalKey<Value>) -> Value? {
        get { locals[key.id] as? Value }
        set {
            if isTornDown { return }
            locals[key.id] = newValue.map { $0 as Any }
        }
    }

    private func makeID() -> UInt64 {
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
            let timeout: Int32 = soon.isEmpty ? -1 : 0
            let count = events.withUnsafeMutableBufferPointer {
                epoll_wait(shared.epollFD, $0.baseAddress, Int32($0.count), timeout)
            }
            if count < 0 {
                if errno == EINTR { continue }
                failure = .lastError("epoll_wait")
                break running
            }
            for index in 0..<Int(count) {
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
            if !soon.isEmpty {
                let work = soon
                soon = []
                for item in work { item() }
            }
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
        let handlers = (registrations, timers, soon)
        registrations = [:]
        descriptors = [:]
        timers = [:]
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
