#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
public import NotifyBus
import Synchronization

/// Why a log could not be written.
public struct EventLogWriteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was being done, for example `open` or `write`.
    public var operation: String
    /// The log's path.
    public var path: String
    /// The error number the system call set.
    public var errno: Int32

    /// What failed and why, for example `cannot open /x/log.jsonl: No such file or directory`.
    public var description: String {
        "cannot \(operation) \(path): \(String(cString: strerror(errno)))"
    }
}

/// Writes an event log, format version 1, one complete line per `write(2)`.
///
/// It wraps `open(2)`, `write(2)` and `close(2)` on one file descriptor.
///
/// Every line goes to the file as soon as it is written, in one system call,
/// so the file is a valid log even if the process is killed between two lines.
/// Safe to use from several threads: lines never interleave.
public final class EventLogWriter: Sendable {
    /// The path the log goes to (`-` for standard output).
    public let path: String
    private let fd: Mutex<Int32>
    private let ownsDescriptor: Bool

    /// Creates (or truncates) the file at `path` and writes the header with `metadata`.
    /// `-` writes to standard output.
    ///
    /// Opens the file with `open(2)` (`O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC`, mode 0644).
    /// - Throws: ``EventLogWriteError`` when the file cannot be opened or the header written.
    public init(path: String, metadata: JSONObject = [:]) throws(EventLogWriteError) {
        self.path = path
        let descriptor: Int32
        if path == "-" {
            descriptor = STDOUT_FILENO
            ownsDescriptor = false
        } else {
            descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { throw EventLogWriteError(operation: "open", path: path, errno: errno) }
            ownsDescriptor = true
        }
        fd = Mutex(descriptor)
        try writeLine(JSONValue.object(EventLog.header(metadata)).jsonText)
    }

    deinit { close() }

    /// Appends one record.
    public func write(_ entry: LogEntry) throws(EventLogWriteError) {
        try writeLine(entry.jsonText)
    }

    /// Appends one record at time `t`.
    public func write(_ record: LogRecord, at t: LogTime) throws(EventLogWriteError) {
        try writeLine(LogEntry(t: t, record: record).jsonText)
    }

    /// Closes the file (`close(2)`; standard output stays open); later writes fail with `EBADF`.
    public func close() {
        fd.withLock { fd in
            if fd >= 0 && ownsDescriptor { _ = Glibc.close(fd) }
            fd = -1
        }
    }

    private func writeLine(_ line: String) throws(EventLogWriteError) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        let failure: Int32? = fd.withLock { fd in
            guard fd >= 0 else { return EBADF }
            var offset = 0
            while offset < bytes.count {
                let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
                if n < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += n
            }
            return nil
        }
        if let failure { throw EventLogWriteError(operation: "write to", path: path, errno: failure) }
    }
}
