#if canImport(Glibc)
package import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Starts a thread that runs `body` (`pthread_create`, default attributes) and returns its
/// handle, to join or detach: a loop's thread, a host name lookup's.
/// - Throws: `EventLoopError.systemCall` with `pthread_create`'s error number when no thread
///   could be started; `body` is then let go without running.
package func startThread(_ body: @escaping @Sendable () -> Void) throws(EventLoopError) -> pthread_t {
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
    return handle
}

/// The closure a new thread runs, boxed to pass through `pthread_create`'s `void *`.
private final class ThreadBody: Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    func run() { body() }
}
