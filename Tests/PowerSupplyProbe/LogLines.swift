import Logging
import NotifyBus

/// A swift-log handler that prints each message of `warning` and above as a line
/// `{"type":"log","level":…,"message":…}` on standard output, beside the notifications.
struct LogLines: LogHandler {
    var logLevel: Logger.Level = .warning
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        emit([("type", "log"), ("level", .string(event.level.rawValue)), ("message", .string("\(event.message)"))])
    }
}
