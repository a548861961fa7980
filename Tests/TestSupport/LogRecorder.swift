import Logging
import Synchronization

/// A swift-log handler that keeps every message logged to it (by a source, a watcher), for tests
/// to look at.
public final class LogRecorder: Sendable {
    /// One logged message.
    public struct Entry: Sendable {
        public var level: Logger.Level
        public var message: String
        public var metadata: Logger.Metadata
    }

    private let entries = Mutex<[Entry]>([])

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

    fileprivate func append(_ entry: Entry) { entries.withLock { $0.append(entry) } }

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
