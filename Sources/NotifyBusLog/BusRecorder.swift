public import NotifyBus
import Synchronization

/// Records everything that happens on a bus into an event log, as it happens.
///
/// Built on `NotificationBus.journal`: every publish, and the lifecycle of every
/// subscription that was given a `name` when it subscribed, become records in
/// bus order. Times are the bus clock's (`t` = time since the bus started), kept
/// non-decreasing. Replaying the log gives each named subscriber the
/// notifications it received live.
public final class BusRecorder: Sendable {
    /// The log being written.
    public let writer: EventLogWriter
    private let state: RecorderState
    private let journal: Journal

    /// Starts recording `bus` into `writer` (whose header is already written).
    public init(bus: NotificationBus, writer: EventLogWriter) {
        let state = RecorderState()
        self.writer = writer
        self.state = state
        self.journal = bus.journal { entry in state.record(entry, writer: writer) }
    }

    /// The first write error, if writing failed (recording stops at the first failure).
    public var failure: EventLogWriteError? { state.failure }

    /// Stops recording and closes the log. Every line written is complete.
    public func finish() {
        journal.cancel()
        writer.close()
    }
}

/// What a recorder remembers between journal entries.
private final class RecorderState: Sendable {
    private struct State {
        var names: [Int: String] = [:]
        var lastT = LogTime.zero
        var failure: EventLogWriteError?
    }

    private let state = Mutex(State())

    var failure: EventLogWriteError? { state.withLock { $0.failure } }

    func record(_ entry: JournalEntry, writer: EventLogWriter) {
        state.withLock { state in
            switch entry {
            case .event(let key, let value, let time):
                Self.write(.event(key: key, value: value, source: nil), at: time, &state, writer)
            case .subscribed(let id, let name, let patterns, let policy, let limit, let initial, let time):
                guard let name else { return }
                state.names[id] = name
                let record = SubscribeRecord(
                    subscriber: name, match: patterns, policy: policy,
                    limit: limit == NotificationBus.defaultLimit ? nil : limit, initial: initial)
                Self.write(.subscribe(record), at: time, &state, writer)
            case .suspended(let id, let time):
                if let name = state.names[id] { Self.write(.suspend(subscriber: name), at: time, &state, writer) }
            case .resumed(let id, let time):
                if let name = state.names[id] { Self.write(.resume(subscriber: name), at: time, &state, writer) }
            case .unsubscribed(let id, let time):
                if let name = state.names.removeValue(forKey: id) {
                    Self.write(.unsubscribe(subscriber: name), at: time, &state, writer)
                }
            }
        }
    }

    private static func write(_ record: LogRecord, at time: Duration, _ state: inout State, _ writer: EventLogWriter) {
        guard state.failure == nil else { return }
        let t = max(state.lastT, LogTime(time))
        state.lastT = t
        do {
            try writer.write(record, at: t)
        } catch {
            state.failure = error
        }
    }
}
