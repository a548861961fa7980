/// `notifywatch`'s job control as a plain state machine: events in, actions out, no I/O (the
/// driver, `JobControlDriver`, carries the actions out). The three ways of watching (the sources
/// here, `--daemon`, `--mqtt`) share it; each suspends and resumes its own subscription
/// (specification: notifywatch output, "Signals").
///
/// - `SIGUSR1` suspends, `SIGUSR2` resumes.
/// - Ctrl-Z (`SIGTSTP`) suspends unless suspended already, then stops the process, but only once
///   the `suspended` line of a suspension it asked for is printed (or after `lineWait` without it):
///   a `suspended` line printed before it asked (the daemon's own, after the process was stopped
///   or frozen from outside) does not count.
/// - `fg` (`SIGCONT`) re-reads the sources (where the watch has them), then resumes a suspension
///   that Ctrl-Z made, and only that one: a suspension asked for with `SIGUSR1` outlasts a stop.
/// - `SIGINT` and `SIGTERM` finish.
///
/// While a stop waits for its `suspended` line, the signals that come meanwhile wait for the stop,
/// as they would in the kernel had the process stopped at once.
struct JobControl: Sendable, Equatable {
    /// What happened.
    enum Event: Sendable, Hashable {
        /// `SIGUSR1`.
        case suspendSignal
        /// `SIGUSR2`.
        case resumeSignal
        /// Ctrl-Z (`SIGTSTP`).
        case stopSignal
        /// `fg` (`SIGCONT`): the process runs again, whatever stopped it.
        case continueSignal
        /// `SIGINT` or `SIGTERM`.
        case terminateSignal
        /// The subscription's `suspended` line was printed.
        case suspendedLinePrinted
        /// The wait `id` for a `suspended` line (`awaitSuspendedLine`) is over.
        case suspendedLineOverdue(id: Int)
    }

    /// What to do, in order.
    enum Action: Sendable, Hashable {
        /// Suspend the subscription: its `suspended` line follows (`suspendedLinePrinted`).
        case suspend
        /// Resume it: its `resumed` line and flush follow.
        case resume
        /// Have every source read its state again (the changes a stop hid join the flush).
        case reread
        /// Wait at most this long for the `suspended` line, then report `suspendedLineOverdue(id:)`.
        case awaitSuspendedLine(within: Duration, id: Int)
        /// Stop the process (`SIGSTOP`); `continueSignal` follows when it runs again.
        case stopProcess
        /// Stop watching: exit with status 0.
        case finish
    }

    /// How long a stop waits for its `suspended` line.
    static let lineWait = Duration.seconds(1)

    /// Whether the sources are re-read on `fg` (only where they run in this process).
    let rereadsOnContinue: Bool
    /// Whether the subscription is suspended (asked for here, and not resumed since).
    private(set) var isSuspended = false
    /// Whether the suspension came from Ctrl-Z: only then does `fg` end it.
    private(set) var suspendedByStop = false
    /// Whether the `suspended` line of the suspension asked for has not been printed yet.
    private(set) var lineDue = false
    /// The wait of a stop for that line, while there is one.
    private(set) var stopWaiting: Int?
    /// Whether it has finished: every later event is ignored.
    private(set) var isFinished = false
    /// Signals that came while a stop waited for its line, in order.
    private var deferred: [Event] = []
    private var nextWait = 0

    /// Job control of a watch that is not suspended.
    init(rereadsOnContinue: Bool) {
        self.rereadsOnContinue = rereadsOnContinue
    }

    /// Handles `event`; returns what to do.
    mutating func handle(_ event: Event) -> [Action] {
        guard !isFinished else { return [] }
        switch event {
        case .suspendedLinePrinted:
            guard lineDue else { return [] }  // not one asked for here
            lineDue = false
            return stopNow()
        case .suspendedLineOverdue(let id):
            guard stopWaiting == id else { return [] }  // an earlier wait
            lineDue = false
            return stopNow()
        default:
            if stopWaiting != nil {
                deferred.append(event)
                return []
            }
            return signal(event)
        }
    }

    private mutating func signal(_ event: Event) -> [Action] {
        switch event {
        case .suspendSignal:
            suspendedByStop = false
            return suspend()
        case .resumeSignal:
            suspendedByStop = false
            return resume()
        case .stopSignal:
            var actions: [Action] = []
            if !isSuspended {
                actions = suspend()
                suspendedByStop = true
            }
            guard lineDue else { return actions + [.stopProcess] }
            nextWait += 1
            stopWaiting = nextWait
            return actions + [.awaitSuspendedLine(within: Self.lineWait, id: nextWait)]
        case .continueSignal:
            var actions: [Action] = rereadsOnContinue ? [.reread] : []
            if suspendedByStop {
                suspendedByStop = false
                actions += resume()
            }
            return actions
        case .terminateSignal:
            isFinished = true
            deferred = []
            return [.finish]
        case .suspendedLinePrinted, .suspendedLineOverdue:
            return []
        }
    }

    private mutating func suspend() -> [Action] {
        guard !isSuspended else { return [] }
        isSuspended = true
        lineDue = true
        return [.suspend]
    }

    private mutating func resume() -> [Action] {
        guard isSuspended else { return [] }
        isSuspended = false
        lineDue = false
        return [.resume]
    }

    /// The stop that waited, if one did, then the signals that came meanwhile.
    private mutating func stopNow() -> [Action] {
        guard stopWaiting != nil else { return [] }
        stopWaiting = nil
        var actions: [Action] = [.stopProcess]
        while stopWaiting == nil, !isFinished, !deferred.isEmpty {
            actions += signal(deferred.removeFirst())
        }
        return actions
    }
}
