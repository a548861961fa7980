#if canImport(Glibc)
import Glibc
#endif
import SystemSupport

/// Buffered output to a file descriptor, written with `write(2)`.
///
/// `lineBuffered` writes each line as soon as it is complete, so a pipe
/// (`| jq`) sees events at once; otherwise output goes out in large chunks.
final class OutputStream {
    let fd: Int32
    var lineBuffered: Bool
    private var buffer: [UInt8] = []

    init(fd: Int32, lineBuffered: Bool) {
        self.fd = fd
        self.lineBuffered = lineBuffered
        buffer.reserveCapacity(1 << 16)
    }

    /// Whether the descriptor is a terminal.
    var isTerminal: Bool { isatty(fd) == 1 }

    /// Writes `text` and a newline.
    func line(_ text: String) {
        line { $0.append(contentsOf: text.utf8) }
    }

    /// Writes the bytes `build` appends to the buffer it is given, and a newline.
    func line(_ build: (inout [UInt8]) -> Void) {
        build(&buffer)
        buffer.append(UInt8(ascii: "\n"))
        if lineBuffered || buffer.count >= 1 << 16 { flush() }
    }

    func flush() {
        var offset = 0
        while offset < buffer.count {
            let n = buffer.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                break  // the reader went away (EPIPE); nothing more to do
            }
            offset += n
        }
        buffer.removeAll(keepingCapacity: true)
    }

    deinit { flush() }
}

/// `notifywatch: <message>` on standard error, in one `write(2)`.
func printError(_ message: String) {
    StandardErrorLogHandler.print("notifywatch: " + message)
}
