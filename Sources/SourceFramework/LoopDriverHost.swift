package import EpollLoop

/// What a source whose work is one driver on a loop thread keeps (the MQTT link, the lifecycle):
/// its status, the driver's key in the loop's storage, and the source's `run()` around them.
/// The driver is made, used and let go on the loop thread only.
package final class LoopDriverHost<Driver>: Sendable {
    /// The source's name, for its errors.
    package let name: String
    /// The loop the driver runs on.
    package let loop: EventLoopThread
    /// The source's status.
    package let reporter = SourceStatusReporter()
    /// The driver's key in the loop's storage.
    package let key = LoopLocalKey<Driver>()

    /// The host of the source `name`'s driver on `loop`; nothing runs before `run(make:stop:)`.
    package init(name: String, loop: EventLoopThread) {
        self.name = name
        self.loop = loop
    }

    /// The source's `run()`: `make` makes the driver on the loop thread (and starts it); once the
    /// task is cancelled or graceful shutdown begins, `stop` undoes its work and calls `done` when
    /// that is done; then the driver is let go and the status updates end.
    /// - Throws: `SourceError.alreadyRunning` when the driver runs already; `SourceError.eventLoop`
    ///   when the loop no longer runs (the status is then `failed`).
    package func run(
        make: @escaping @Sendable (LoopContext) -> Driver,
        stop: @escaping @Sendable (Driver, _ done: @escaping () -> Void) -> Void
    ) async throws(SourceError) {
        let ran: Bool
        do {
            ran = try await key.runUntilCancelled(on: loop, make: make) { driver, _, done in stop(driver, done) }
        } catch {
            reporter.report(.failed(reason: "event loop: \(error)"))
            reporter.finish()
            throw SourceError.eventLoop(source: name, reason: "\(error)")
        }
        guard ran else { throw SourceError.alreadyRunning(source: name) }
        reporter.finish()
    }

    /// What `read` says of the running driver, on the loop thread; `nil` when it does not run.
    package func read<Value: Sendable>(_ read: @escaping @Sendable (Driver) -> Value) async -> Value? {
        let key = self.key
        return try? await loop.submit { context in context[local: key].map(read) } ?? nil
    }
}
