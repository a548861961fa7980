#if canImport(Glibc)
import Glibc
#endif
import Logging

/// Prints log messages on standard error as notifywatch's other messages:
/// `notifywatch: <source>: <message>` for a source's (metadata `source`), else
/// `notifywatch: <message>`; one `write(2)` per message.
struct StandardErrorLogHandler: LogHandler {
    /// The least severe level printed.
    var logLevel: Logger.Level
    /// Metadata added to every message.
    var metadata: Logger.Metadata = [:]

    init(logLevel: Logger.Level) {
        self.logLevel = logLevel
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let source = event.metadata?["source"] ?? metadata["source"]
        printError(source.map { "\($0): \(event.message)" } ?? "\(event.message)")
    }
}
