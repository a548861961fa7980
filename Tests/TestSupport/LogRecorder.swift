public import Logging
public import NotifyBus
import Synchronization

/// A swift-log handler that keeps every message logged to it (by a source, a watcher), for tests
/// to look at.
public final class LogRecorder: Sendable {
    /// One logged message.
    public struct Entry: Sendable {
        public var level: Logger.Level
        public var message: String
        public var metadata: Logger.Metadata
        /// For a status change (`status: …`, logged by the source right after it reported it), the
        /// bus's store at that moment, when the recorder follows a bus (`snapshotStore(of:)`).
        public var store: [String: JSONValue]?
    }

    private let entries = Mutex<[Entry]>([])
    private let followed = Mutex<NotificationBus?>(nil)

    public init() {}

    /// A logger (of every level) whose messages land here.
    public var logger: Logger {
        var logger = Logger(label: "test") { _ in Handler(recorder: self) }
        logger.logLevel = .trace
        return logger
    }

    /// Everything logged, oldest first.
    public var all: [Entry] { entries.withLock { $0 } }

    /// The messages of what the source skipped (warnings and worse), oldest first.
    public var recent: [String] { all.filter { $0.level >= .warning }.map(\.message) }

    /// Takes `bus`'s store with every status change logged from now on. A source logs its
    /// status change on its loop thread right after reporting it, so the store taken then is
    /// what a subscriber arriving at that status would get as its initial values.
    public func snapshotStore(of bus: NotificationBus) { followed.withLock { $0 = bus } }

    /// The store when the source first logged the status named `name` (`running`, `unavailable`),
    /// `nil` when it did not (or no bus is followed).
    public func storeWhenFirst(_ name: String) -> [String: JSONValue]? {
        all.first { $0.store != nil && $0.message.hasPrefix("status: \(name)") }?.store
    }

    fileprivate func append(_ entry: Entry) {
        var entry = entry
        if entry.message.hasPrefix("status: "), let bus = followed.withLock({ $0 }) {
            entry.store = Dictionary(bus.snapshot().map { ($0.key, $0.value) }) { $1 }
        }
        entries.withLock { $0.append(entry) }
    }

    private struct Handler: LogHandler {
        let recorder: LogRecorder
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            recorder.append(Entry(
                level: event.level, message: "\(event.message)",
                metadata: metadata.merging(event.metadata ?? [:]) { $1 }))
        }
    }
}
