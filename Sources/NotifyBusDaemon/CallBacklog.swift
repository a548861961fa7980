/// The calls whose work is heavy (`Subscribe` and `Snapshot`: up to 64 patterns of up to 1 KiB
/// each, parsed, checked and matched against every key, ~0.6 ms a call at the limits), waiting for
/// their turn on the loop. A burst of them then no longer keeps the cheap calls read behind them
/// (another client's `Get`, `GetValue`, a subscription's `Cancel`) and live events waiting: those
/// are answered as they are read, and the backlog is worked through, oldest first, in slices of at
/// most `Bounds.slice` between the loop's rounds.
///
/// What waits is bounded: past `Bounds.bytes` (what each call counts for: its patterns, as
/// received, and a fixed cost of its own, so that calls with tiny patterns are few), the oldest are
/// carried out at once before a new one waits, so a flood is held to the daemon's pace as without
/// a backlog (libdbus stops reading past its read-ahead, the bus holds the rest).
///
/// Plain state: `BusService` carries out its actions (`run`: carry out that call now; `schedule`:
/// start a slice after this round of the loop).
struct CallBacklog<Work> {
    /// How much waits, and how long a slice runs.
    struct Bounds: Sendable, Hashable {
        /// The bytes of patterns the waiting calls may hold in all.
        var bytes = 8 << 20
        /// A slice's length: once it has run this long, the rest waits for the next round.
        var slice: Duration = .milliseconds(2)
    }

    /// What the service does.
    enum Action {
        /// Carry out this call now (the oldest, to make room).
        case run(Work)
        /// Run a slice after this round of the loop.
        case schedule
    }

    let bounds: Bounds
    /// The waiting calls, oldest first, from `head` on.
    private var waiting: [(work: Work, bytes: Int)] = []
    private var head = 0
    /// The bytes of patterns the waiting calls hold.
    private(set) var bytes = 0
    /// Whether a slice is scheduled.
    private(set) var isScheduled = false

    init(bounds: Bounds = Bounds()) {
        self.bounds = bounds
    }

    /// How many calls wait.
    var count: Int { waiting.count - head }

    /// A call holding `bytes` of patterns arrived: it waits (after the oldest are carried out when
    /// it would pass the bound), and a slice is scheduled unless one is.
    mutating func arrived(_ work: Work, bytes: Int) -> [Action] {
        var actions: [Action] = []
        while count > 0, self.bytes + bytes > bounds.bytes {
            actions.append(.run(takeOldest()))
        }
        waiting.append((work, bytes))
        self.bytes += bytes
        if !isScheduled {
            isScheduled = true
            actions.append(.schedule)
        }
        return actions
    }

    /// The next call of the slice that has run for `elapsed` (the first one whatever it took);
    /// `nil` once the slice is over or nothing waits.
    mutating func next(after elapsed: Duration) -> Work? {
        guard count > 0, elapsed < bounds.slice else { return nil }
        return takeOldest()
    }

    /// The slice ended: whether another is to run (calls still wait).
    mutating func sliceEnded() -> Bool {
        isScheduled = count > 0
        return isScheduled
    }

    /// Every waiting call, oldest first, and nothing waits any more (the service stops).
    mutating func takeAll() -> [Work] {
        let all = waiting[head...].map(\.work)
        waiting = []
        head = 0
        bytes = 0
        return all
    }

    private mutating func takeOldest() -> Work {
        let oldest = waiting[head]
        head += 1
        bytes -= oldest.bytes
        if head == waiting.count {
            waiting.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= waiting.count {
            waiting.removeFirst(head)
            head = 0
        }
        return oldest.work
    }
}
