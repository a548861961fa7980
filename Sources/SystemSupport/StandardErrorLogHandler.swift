#if canImport(Glibc)
import Glibc
#endif
package import Logging

/// A swift-log handler for command-line tools that run sources: each message on standard error
/// as `<program>: <source>: <message>` for a source's (metadata `source`), else
/// `<program>: <message>`, in one `write(2)`.
///
/// ```swift
/// let logger = Logger(label: "mytool.sources") { _ in StandardErrorLogHandler(program: "mytool", logLevel: .warning) }
/// let sources = SystemSources.all(bus: bus, options: .init(logger: logger))
/// ```
package struct StandardErrorLogHandler: LogHandler {
    /// The name that starts every line.
    package let program: String
    /// The least severe level printed.
    package var logLevel: Logger.Level
    /// Metadata added to every message.
    package var metadata: Logger.Metadata = [:]

    /// A handler printing as `program` from `logLevel` up.
    package init(program: String, logLevel: Logger.Level) {
        self.program = program
        self.logLevel = logLevel
    }

    /// The metadata value for `key`.
    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Prints `event`'s message.
    package func log(event: LogEvent) {
        let source = event.metadata?["source"] ?? metadata["source"]
        Self.print(program + ": " + (source.map { "\($0): \(event.message)" } ?? "\(event.message)"))
    }

    /// Writes `line` and a newline to standard error in one `write(2)`.
    package static func print(_ line: String) {
        var bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeMutableBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
