import Synchronization

extension EventLoopThread {
    /// Waits `duration` on this loop's timers, and returns early when the task is cancelled or
    /// the loop stops.
    ///
    /// Unlike `Task.sleep` on the default executor, it starts nothing of libdispatch's: there
    /// `Task.sleep` schedules the wake-up with `dispatch_after`, which starts libdispatch's worker
    /// pool, whose monitor then wakes the process once a second for as long as it runs. (Where
    /// `LoopExecutor` is installed, `Task.sleep` runs on its loops' timers as well.)
    public func sleep(for duration: Duration) async {
        let wait = SleepState()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                guard wait.start(continuation) else { return }
                do {
                    try execute { context in
                        let timer = context.scheduleTimer(after: duration) { wait.finish() }
                        if !wait.setTimer(timer) { context.cancelTimer(timer) }
                    }
                } catch {
                    wait.finish()
                }
            }
        } onCancel: {
            if let timer = wait.cancel() {
                try? execute { context in context.cancelTimer(timer) }
            }
        }
    }
}

/// One `sleep(for:)`: its continuation, resumed once, and its timer, to cancel on the loop.
private final class SleepState: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Void, Never>?
        var timer: LoopTimer?
        var done = false
    }

    private let state = Mutex(State())

    /// Keeps the continuation; `false` (and resumed at once) when the sleep was cancelled already.
    func start(_ continuation: CheckedContinuation<Void, Never>) -> Bool {
        let cancelled = state.withLock { state -> Bool in
            if state.done { return true }
            state.continuation = continuation
            return false
        }
        if cancelled { continuation.resume() }
        return !cancelled
    }

    /// Keeps the timer, to cancel it; `false` when the sleep has ended already.
    func setTimer(_ timer: LoopTimer) -> Bool {
        state.withLock { state in
            if state.done { return false }
            state.timer = timer
            return true
        }
    }

    /// The timer fired (or could not be set): wake the sleeper.
    func finish() {
        state.withLock { state in
            state.done = true
            state.timer = nil
            return state.continuation.take()
        }?.resume()
    }

    /// The task was cancelled: wake the sleeper, and return the timer to cancel on the loop.
    func cancel() -> LoopTimer? {
        let (continuation, timer) = state.withLock { state in
            state.done = true
            defer { state.timer = nil }
            return (state.continuation.take(), state.timer)
        }
        continuation?.resume()
        return timer
    }
}
