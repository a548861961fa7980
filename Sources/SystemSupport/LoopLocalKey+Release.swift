package import EpollLoop

extension LoopLocalKey {
    /// Runs `body` on `loop`'s thread with the value kept under this key, and returns once `body`
    /// called its `done`; at once when no value is kept or the loop no longer runs (and the value
    /// is gone with it). For a stop that finishes later, e.g. once a broker took a last message.
    package func withValue(
        on loop: EventLoopThread, _ body: @escaping @Sendable (Value, LoopContext, _ done: @escaping () -> Void) -> Void
    ) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            do {
                try loop.execute { context in
                    guard let value = context[local: self] else {
                        continuation.resume()
                        return
                    }
                    body(value, context) { continuation.resume() }
                }
            } catch {
                continuation.resume()
            }
        }
    }

    /// Runs `body` on `loop`'s thread with the value kept under this key, if any, then lets the
    /// value go; returns when that is done, or at once when the loop no longer runs.
    package func release(on loop: EventLoopThread, after body: @escaping @Sendable (Value) -> Void) async {
        _ = try? await loop.submit { context in
            if let value = context[local: self] { body(value) }
            context[local: self] = nil
        }
    }
}
