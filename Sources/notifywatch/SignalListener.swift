#if canImport(Glibc)
import Glibc
#endif
import EpollLoop
import Synchronization

/// The write end of the self-pipe the signal handler writes to (-1: none yet).
private let signalPipe = Atomic<Int32>(-1)

/// Turns signals into an `AsyncStream`, through a self-pipe read on the event loop.
///
/// The handler only writes the signal's number to a pipe (async-signal-safe);
/// the event loop reads it and hands it to the stream. Nothing polls: an idle
/// listener costs no wake-ups.
final class SignalListener: Sendable {
    let signals: AsyncStream<Int32>
    private let readEnd: Int32
    private let writeEnd: Int32

    /// Installs handlers for `numbers`; the stream yields each signal as it arrives.
    init(_ numbers: [Int32], loop: EventLoopThread) throws {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0,
            fcntl(ends[0], F_SETFD, FD_CLOEXEC) == 0, fcntl(ends[1], F_SETFD, FD_CLOEXEC) == 0,
            fcntl(ends[0], F_SETFL, O_NONBLOCK) == 0, fcntl(ends[1], F_SETFL, O_NONBLOCK) == 0
        else {
            throw CLIError("cannot create the signal pipe: \(String(cString: strerror(errno)))")
        }
        readEnd = ends[0]
        writeEnd = ends[1]
        signalPipe.store(writeEnd, ordering: .releasing)
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self, bufferingPolicy: .unbounded)
        signals = stream
        let fd = readEnd
        try loop.execute { context in
            do {
                _ = try context.register(fileDescriptor: fd, interest: .readable) { _ in
                    var buffer = [UInt8](repeating: 0, count: 64)
                    while true {
                        let n = read(fd, &buffer, buffer.count)
                        if n <= 0 { break }
                        for byte in buffer[0..<n] { continuation.yield(Int32(byte)) }
                    }
                }
            } catch {
                continuation.finish()
            }
        }
        for number in numbers {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { signal in
                let saved = errno
                var byte = UInt8(truncatingIfNeeded: signal)
                _ = write(signalPipe.load(ordering: .acquiring), &byte, 1)
                errno = saved
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(number, &action, nil)
        }
    }
}

/// An error the CLI reports in words and exits non-zero.
struct CLIError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
