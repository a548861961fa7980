import Synchronization

/// Keeps a source's status and hands every change to any number of `AsyncStream` readers.
///
/// Report from any thread; a status equal to the current one is not repeated. Streams start
/// with the current status and end when the reporter is finished (when the source's `run()`
/// returns).
public final class SourceStatusReporter: Sendable {
    private struct State {
        var current: SourceStatus
        var continuations: [UInt64: AsyncStream<SourceStatus>.Continuation] = [:]
        var nextID: UInt64 = 0
        var finished = false
    }

    private let state: Mutex<State>

    /// Creates a reporter with `initial` as the current status.
    public init(initial: SourceStatus = .notStarted) {
        state = Mutex(State(current: initial))
    }

    /// The current status.
    public var current: SourceStatus { state.withLock { $0.current } }

    /// Makes `status` current and tells every reader, unless it is the current status already.
    /// Reopens a finished reporter (a source that runs again).
    /// - Returns: whether `status` differed from the current one.
    @discardableResult
    public func report(_ status: SourceStatus) -> Bool {
        state.withLock { state in
            state.finished = false
            guard state.current != status else { return false }
            state.current = status
            // Yielding never calls back into the reporter, so it is safe under the lock, and
            // keeps reports from different threads in one order for every reader.
            for continuation in state.continuations.values { continuation.yield(status) }
            return true
        }
    }

    /// The current status, then every change, until `finish()`.
    public func updates() -> AsyncStream<SourceStatus> {
        let (stream, continuation) = AsyncStream.makeStream(of: SourceStatus.self, bufferingPolicy: .unbounded)
        let finished = state.withLock { state -> Bool in
            continuation.yield(state.current)
            if state.finished { return true }
            let id = state.nextID
            state.nextID += 1
            state.continuations[id] = continuation
            continuation.onTermination = { [weak self] _ in
                self?.state.withLock { _ = $0.continuations.removeValue(forKey: id) }
            }
            return false
        }
        if finished { continuation.finish() }
        return stream
    }

    /// Ends every stream (the status stays as it is).
    public func finish() {
        let continuations = state.withLock { state in
            state.finished = true
            defer { state.continuations = [:] }
            return Array(state.continuations.values)
        }
        // Outside the lock: finishing runs `onTermination`, which takes it.
        for continuation in continuations { continuation.finish() }
    }
}
