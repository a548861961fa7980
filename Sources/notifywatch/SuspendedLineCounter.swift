import Synchronization

/// The `suspended` lines `notifywatch --daemon` has printed, counted, and waits for the next one:
/// Ctrl-Z stops the process only once the line its own `Suspend` brings is out, never on a line
/// printed earlier (the daemon's own suspension of a frozen or stopped process prints one too).
final class SuspendedLineCounter: Sendable {
    private struct Waiter {
        let id: UInt64
        let after: Int
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var printed = 0
        var nextID: UInt64 = 0
        var waiters: [Waiter] = []
        /// Waits whose time ran out before they were registered.
        var abandoned: Set<UInt64> = []
    }

    private let state = Mutex(State())

    /// How many `suspended` lines have been printed.
    var printed: Int { state.withLock { $0.printed } }

    /// Records a printed `suspended` line and wakes whoever waits for it.
    func linePrinted() {
        let ready = state.withLock { state in
            state.printed += 1
            let printed = state.printed
            let ready = state.waiters.filter { $0.after < printed }
            state.waiters.removeAll { $0.after < printed }
            return ready
        }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Returns once more than `earlier` lines have been printed, or after `timeout`.
    func waitForLine(after earlier: Int, within timeout: Duration) async {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.wait(id: id, after: earlier) }
            group.addTask {
                guard (try? await Task.sleep(for: timeout)) != nil else { return }
                self.giveUp(id: id)
            }
            await group.next()
            group.cancelAll()
        }
        _ = state.withLock { $0.abandoned.remove(id) }
    }

    private func wait(id: UInt64, after earlier: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                if state.printed > earlier || state.abandoned.contains(id) { return true }
                state.waiters.append(Waiter(id: id, after: earlier, continuation: continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    private func giveUp(id: UInt64) {
        let waiter = state.withLock { state -> Waiter? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else {
                state.abandoned.insert(id)
                return nil
            }
            return state.waiters.remove(at: index)
        }
        waiter?.continuation.resume()
    }
}
