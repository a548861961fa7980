#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Starts a thread that runs `body` (`pthread_create`, default attributes) and returns its
/// handle, to join or detach once: a loop's thread, a host name lookup's.
/// - Throws: `EventLoopError.systemCall` with `pthread_create`'s error number when no thread
///   could be started; `body` is then let go without running.
package func startThread(_ body: @escaping @Sendable () -> Void) throws(EventLoopError) -> StartedThread {
    let argument = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
    var handle = pthread_t()
    let result = pthread_create(&handle, nil, { argument in
        if let argument { Unmanaged<ThreadBody>.fromOpaque(argument).takeRetainedValue().run() }
        return nil
    }, argument)
    guard result == 0 else {
        Unmanaged<ThreadBody>.fromOpaque(argument).release()
        throw .systemCall(operation: "pthread_create", errno: result)
    }
    return StartedThread(handle: handle)
}

/// A thread `startThread` started, to be joined or detached once.
package struct StartedThread: Sendable {
    fileprivate let handle: pthread_t

    /// Waits for the thread to end (`pthread_join`).
    package func join() { pthread_join(handle, nil) }

    /// Lets the thread end on its own (`pthread_detach`).
    package func detach() { pthread_detach(handle) }
}

/// The closure a new thread runs, boxed to pass through `pthread_create`'s `void *`.
private final class ThreadBody: Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    func run() { body() }
}
