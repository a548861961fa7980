import ServiceLifecycle
import Synchronization

/// Suspends until the current task is cancelled or, inside a `ServiceGroup`, until graceful
/// shutdown begins; without polling and without a timer.
package func waitUntilCancelledOrShutDown() async {
    let gate = CancellationGate()
    await withTaskCancellationOrGracefulShutdownHandler {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            gate.wait(continuation)
        }
    } onCancelOrGracefulShutdown: {
        gate.open()
    }
}

/// A continuation that is resumed exactly once, when the gate opens (at once if it is open).
private final class CancellationGate: Sendable {
    private enum State {
        case closed
        case waiting(CheckedContinuation<Void, Never>)
        case open
    }

    private let state = Mutex(State.closed)

    func wait(_ continuation: CheckedContinuation<Void, Never>) {
        let resumeNow = state.withLock { state -> Bool in
            if case .open = state { return true }
            state = .waiting(continuation)
            return false
        }
        if resumeNow { continuation.resume() }
    }

    func open() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state = .open }
            if case .waiting(let continuation) = state { return continuation }
            return nil
        }
        waiter?.resume()
    }
}
