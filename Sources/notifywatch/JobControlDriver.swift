#if canImport(Glibc)
import Glibc
#endif
import SystemSupport

/// Carries out `JobControl`'s actions for one way of watching: feeds it the signals and the
/// printed `suspended` lines in the order they come, stops the process, times the waits for a
/// line, and hands the subscription's actions (`suspend`, `resume`, `reread`) to the watch.
struct JobControlDriver: Sendable {
    /// What the watch does for job control: `JobControl`'s actions on its subscription.
    enum Request: Sendable, Hashable {
        /// Suspend the subscription (its `suspended` line is then printed).
        case suspend
        /// Resume it.
        case resume
        /// Have every source read its state again.
        case reread
    }

    /// The signals job control handles.
    static let signals: [Int32] = [SIGUSR1, SIGUSR2, SIGTSTP, SIGCONT, SIGINT, SIGTERM]

    private let rereadsOnContinue: Bool
    private let events: AsyncStream<JobControl.Event>
    private let input: AsyncStream<JobControl.Event>.Continuation

    /// A driver; `rereadsOnContinue` where the sources run in this process.
    init(rereadsOnContinue: Bool) {
        self.rereadsOnContinue = rereadsOnContinue
        (events, input) = AsyncStream.makeStream(of: JobControl.Event.self)
    }

    /// Tells job control that the subscription's `suspended` line was printed (from any thread,
    /// right after printing it).
    func suspendedLinePrinted() { input.yield(.suspendedLinePrinted) }

    /// Follows `signals` until SIGINT or SIGTERM (or the end of `signals`), handing `perform` the
    /// subscription's actions one at a time, in order.
    func run(signals: AsyncStream<Int32>, perform: (Request) async -> Void) async {
        var state = JobControl(rereadsOnContinue: rereadsOnContinue)
        let input = self.input
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await signal in signals {
                    if let event = JobControl.Event(signal: signal) { input.yield(event) }
                }
                input.yield(.terminateSignal)
            }
            events: for await event in events {
                for action in state.handle(event) {
                    switch action {
                    case .awaitSuspendedLine(let within, let id):
                        group.addTask {
                            guard (try? await Task.sleep(for: within)) != nil else { return }
                            input.yield(.suspendedLineOverdue(id: id))
                        }
                    case .stopProcess:
                        kill(getpid(), SIGSTOP)  // really stop; SIGCONT brings us back
                    case .finish:
                        break events
                    case .suspend: await perform(.suspend)
                    case .resume: await perform(.resume)
                    case .reread: await perform(.reread)
                    }
                }
            }
            group.cancelAll()
        }
    }
}

extension JobControl.Event {
    /// The event of a signal `JobControlDriver.signals` names; `nil` for any other.
    init?(signal: Int32) {
        switch signal {
        case SIGUSR1: self = .suspendSignal
        case SIGUSR2: self = .resumeSignal
        case SIGTSTP: self = .stopSignal
        case SIGCONT: self = .continueSignal
        case SIGINT, SIGTERM: self = .terminateSignal
        default: return nil
        }
    }
}
