package import EpollLoop
import SystemSupport

extension LoopLocalKey {
    /// The life of a source's part on `loop` (a built-in source's watcher, the MQTT link, the
    /// lifecycle) for the length of the source's `run()`: `make` makes it on the loop thread and it
    /// is kept under this key; once the task is cancelled or graceful shutdown begins, `stop` undoes
    /// its work there (releases claims, thaws, disconnects) and calls `done` when that is done;
    /// then it is let go and this returns.
    /// - Returns: `false`, at once, when a value is kept under this key already (the source runs).
    /// - Throws: `EventLoopError` when the loop does not run; nothing was made then.
    package func runUntilCancelled(
        on loop: EventLoopThread, make: @escaping @Sendable (LoopContext) -> Value,
        stop: @escaping @Sendable (Value, LoopContext, _ done: @escaping () -> Void) -> Void
    ) async throws(EventLoopError) -> Bool {
        let made = try await loop.submit { context -> Bool in
            guard context[local: self] == nil else { return false }
            context[local: self] = make(context)
            return true
        }
        guard made else { return false }
        await waitUntilCancelledOrShutDown()
        await withValue(on: loop) { value, context, done in
            stop(value, context) {
                context[local: self] = nil
                done()
            }
        }
        return true
    }
}
