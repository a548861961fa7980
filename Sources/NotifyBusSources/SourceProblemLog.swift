import Synchronization

/// Problems a source met and skipped (a property of the wrong type, an unexpected signal, a
/// failed call), for a CLI or a test to show. They do not change the source's status.
///
/// Keeps the last `capacity` problems; streams get every later one.
/// A source that reports the input it skipped (wrong types, malformed signals) in a problem log.
public protocol ProblemReportingSource: NotifyBusSource {
    /// Problems met and skipped, most recent last.
    var problems: SourceProblemLog { get }
}

public final class SourceProblemLog: Sendable {
    private struct State {
        var recent: [String] = []
        var continuations: [UInt64: AsyncStream<String>.Continuation] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())
    /// How many problems are kept.
    public let capacity: Int

    /// Creates an empty log.
    public init(capacity: Int = 64) {
        self.capacity = max(1, capacity)
    }

    /// Records `problem` and hands it to every stream.
    public func report(_ problem: String) {
        state.withLock { state in
            state.recent.append(problem)
            if state.recent.count > capacity { state.recent.removeFirst(state.recent.count - capacity) }
            for continuation in state.continuations.values { continuation.yield(problem) }
        }
    }

    /// The problems kept, oldest first.
    public var recent: [String] { state.withLock { $0.recent } }

    /// Every problem reported from now on.
    public func updates() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .unbounded)
        state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.continuations[id] = continuation
            continuation.onTermination = { [weak self] _ in
                self?.state.withLock { _ = $0.continuations.removeValue(forKey: id) }
            }
        }
        return stream
    }
}
