#if canImport(Glibc)
import Glibc
#endif
package import EpollLoop
import Synchronization

/// The write end of the self-pipe the signal handler writes to (-1: none yet).
private let signalPipe = Atomic<Int32>(-1)

/// Turns POSIX signals into an `AsyncStream`, through a self-pipe read on an event loop: the
/// tools' one way to hear SIGINT, SIGTERM and the job-control signals. Wraps `sigaction`.
///
/// The handler only writes the signal's number to a pipe (async-signal-safe);
/// the event loop reads it and hands it to the stream. Nothing polls: an idle
/// listener costs no wake-ups. One listener a process: a second one takes the signals over.
package final class SignalListener: Sendable {
    /// Each signal caught, in order; it ends if the loop cannot watch the pipe.
    package let signals: AsyncStream<Int32>

    /// Installs handlers for `numbers`; the stream yields each signal as it arrives.
    /// - Throws: `EventLoopError.systemCall` when the pipe cannot be made, or the loop's error
    ///   when it has shut down.
    package init(_ numbers: [Int32], loop: EventLoopThread) throws(EventLoopError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw .systemCall(operation: "pipe", errno: errno) }
        for fd in ends {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        }
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self, bufferingPolicy: .unbounded)
        signals = stream
        let readEnd = ends[0]
        do {
            try loop.execute { context in
                do {
                    _ = try context.register(fileDescriptor: readEnd, interest: .readable) { _ in
                        var buffer = [UInt8](repeating: 0, count: 64)
                        while true {
                            let n = read(readEnd, &buffer, buffer.count)
                            if n <= 0 { break }
                            for byte in buffer[0..<n] { continuation.yield(Int32(byte)) }
                        }
                    }
                } catch {
                    continuation.finish()
                }
            }
        } catch {
            close(ends[0])
            close(ends[1])
            throw error
        }
        signalPipe.store(ends[1], ordering: .releasing)
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
