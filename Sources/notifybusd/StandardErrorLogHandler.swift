#if canImport(Glibc)
import Glibc
#endif
import Logging

/// Prints log messages on standard error, one `write(2)` each:
/// `notifybusd: <source>: <message>` for a source's (metadata `source`), else `notifybusd: <message>`.
struct StandardErrorLogHandler: LogHandler {
    var logLevel: Logger.Level
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
        Self.print("notifybusd: " + (source.map { "\($0): \(event.message)" } ?? "\(event.message)"))
    }

    /// Writes `line` and a newline to standard error in one `write(2)`.
    static func print(_ line: String) {
        var bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeMutableBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
