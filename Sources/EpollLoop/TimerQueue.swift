import HeapModule

/// A loop's timers, ordered by deadline: a plain value, with no clock and no C.
///
/// The timers live in a dictionary by id; a min-heap of (deadline, id) says which is due first.
/// Cancelling removes the timer from the dictionary only; its heap entry goes stale and is
/// dropped when it reaches the top (or when stale entries outnumber live ones, by rebuilding the
/// heap). Timers with equal deadlines come out in the order they were scheduled (ids grow).
struct TimerQueue<Handler> {
    /// One timer: when it is next due, its period if it repeats, and what it runs.
    struct Timer {
        var deadline: UInt64
        let interval: UInt64?
        let handler: Handler
    }

    /// A heap entry; it is current while the timer `id` exists with this `deadline`.
    struct Due: Comparable {
        let deadline: UInt64
        let id: UInt64

        static func < (lhs: Due, rhs: Due) -> Bool {
            (lhs.deadline, lhs.id) < (rhs.deadline, rhs.id)
        }
    }

    private(set) var timers: [UInt64: Timer] = [:]
    private var heap = Heap<Due>()

    /// Whether no timer is scheduled.
    var isEmpty: Bool { timers.isEmpty }

    /// Whether the timer `id` is scheduled.
    func contains(_ id: UInt64) -> Bool { timers[id] != nil }

    /// Schedules a timer; `id` must be new and greater than the ids scheduled before it.
    mutating func schedule(id: UInt64, deadline: UInt64, interval: UInt64?, handler: Handler) {
        timers[id] = Timer(deadline: deadline, interval: interval, handler: handler)
        heap.insert(Due(deadline: deadline, id: id))
    }

    /// Cancels the timer `id`; returns whether it was scheduled.
    @discardableResult
    mutating func cancel(_ id: UInt64) -> Bool {
        guard timers.removeValue(forKey: id) != nil else { return false }
        if heap.count > 64 && heap.count > 2 * timers.count {
            heap = Heap(timers.map { Due(deadline: $0.value.deadline, id: $0.key) })
        }
        return true
    }

    /// The earliest deadline, if any timer is scheduled (drops stale entries on the way).
    mutating func earliestDeadline() -> UInt64? {
        dropStale()
        return heap.min?.deadline
    }

    /// Takes the earliest timer if it is due at `now`: a one-shot timer ends, a repeating one is
    /// scheduled again one period later (or one period after `now` if it fell behind).
    /// - Returns: its id and handler, or `nil` when no timer is due.
    mutating func popDue(at now: UInt64) -> (id: UInt64, handler: Handler)? {
        dropStale()
        guard let first = heap.min, first.deadline <= now, var timer = timers[first.id] else { return nil }
        heap.removeMin()
        if let interval = timer.interval {
            var next = timer.deadline &+ interval
            if next <= now { next = now &+ interval }
            timer.deadline = next
            timers[first.id] = timer
            heap.insert(Due(deadline: next, id: first.id))
        } else {
            timers[first.id] = nil
        }
        return (first.id, timer.handler)
    }

    /// Ends every timer, returning them (to release their handlers outside the queue).
    mutating func removeAll() -> [UInt64: Timer] {
        let all = timers
        timers = [:]
        heap = Heap()
        return all
    }

    private mutating func dropStale() {
        while let first = heap.min, timers[first.id]?.deadline != first.deadline {
            heap.removeMin()
        }
    }
}
