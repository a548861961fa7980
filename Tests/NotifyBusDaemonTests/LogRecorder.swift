import Logging
import Synchronization

/// A swift-log handler that keeps every message, for tests to look at.
final class LogRecorder: Sendable {
    /// One logged message.
    struct Entry: Sendable {
        var level: Logger.Level
        var message: String
    }

    private let entries = Mutex<[Entry]>([])

    /// A logger (of every level) whose messages land here.
    var logger: Logger {
        var logger = Logger(label: "test") { _ in Handler(recorder: self) }
        logger.logLevel = .trace
        return logger
    }

    /// Everything logged, oldest first.
    var all: [Entry] { entries.withLock { $0 } }

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
            recorder.append(Entry(level: event.level, message: "\(event.message)"))
        }
    }
}
