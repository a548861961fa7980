import CEpollLoop

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Timers: a `TimerQueue` ordered by deadline, and the one timerfd armed for its earliest entry.
extension LoopContext {
    static let shortestInterval: UInt64 = 1_000_000  // 1 ms

    /// Calls `handler` on this thread after `delay`, and then every `interval` if one is given,
    /// until cancelled. One-shot timers end after firing.
    ///
    /// Timers run on `CLOCK_BOOTTIME` (where the kernel has it), so time spent in system sleep
    /// counts: a timer that fell due during sleep fires right after the wake-up. A repeating timer
    /// that falls behind skips the missed periods instead of firing for each. Intervals shorter
    /// than 1 ms are taken as 1 ms. Timers due at the same moment fire in the order they were
    /// scheduled. The loop arms its one timerfd for the earliest timer only.
    /// - Returns: the timer, to cancel it; a timer scheduled after shutdown never fires.
    @discardableResult
    public func scheduleTimer(
        after delay: Duration, repeating interval: Duration? = nil, handler: @escaping () -> Void
    ) -> LoopTimer {
        scheduleTimer(deadline: now() &+ Self.nanoseconds(delay), repeating: interval, handler: handler)
    }

    /// Schedules a timer due at `deadline` on the loop's clock (nanoseconds, as `now()`).
    @discardableResult
    func scheduleTimer(deadline: UInt64, repeating interval: Duration?, handler: @escaping () -> Void) -> LoopTimer {
        let id = makeID()
        guard !isTornDown else { return LoopTimer(id: id) }
        let period = interval.map { max(Self.nanoseconds($0), Self.shortestInterval) }
        timers.schedule(id: id, deadline: deadline, interval: period, handler: handler)
        timersChanged = true
        return LoopTimer(id: id)
    }

    /// Cancels `timer`: its handler is not called again. Ended or unknown timers are ignored.
    public func cancelTimer(_ timer: LoopTimer) {
        if timers.cancel(timer.id) { timersChanged = true }
    }

    /// Whether `timer` is still scheduled (a one-shot timer that fired, or a cancelled one, is not).
    public func isScheduled(_ timer: LoopTimer) -> Bool { timers.contains(timer.id) }

    /// Fires the timers due now, earliest first; a handler may schedule and cancel timers,
    /// and a timer it cancels does not fire even if it was due.
    func fireDueTimers() {
        let now = now()
        while let (_, handler) = timers.popDue(at: now) {
            timersChanged = true
            handler()
        }
    }

    /// Arms the timerfd for the earliest deadline, or disarms it when there is no timer.
    /// Wraps `timerfd_settime`.
    func rearmTimer() {
        timersChanged = false
        let earliest = timers.earliestDeadline()
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

    /// The loop's clock, in nanoseconds. Wraps `clock_gettime`.
    func now() -> UInt64 {
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
}
