import Synchronization

private let nextLoopLocalKeyID = Atomic<UInt64>(1)

/// The name of a value kept in a loop's storage (`LoopContext[local:]`).
///
/// This is how state that must stay on the loop thread (libudev and libdbus objects, which are
/// not thread-safe and not `Sendable`) is reached from other threads: the state lives in the
/// loop's storage, which only code running on the loop thread can touch, and a job sent from
/// anywhere (`EventLoopThread.execute`) carries only this `Sendable` key to find it again.
///
/// ```swift
/// let key = LoopLocalKey<Watcher>()
/// try loop.execute { context in context[local: key] = Watcher(context) }   // made on the loop
/// try loop.execute { context in context[local: key]?.refresh() }          // used on the loop
/// ```
/// `Value` itself never crosses threads, so it need not be `Sendable`.
public struct LoopLocalKey<Value>: Sendable, Hashable {
    let id: UInt64

    /// A new key, distinct from every other.
    public init() {
        id = nextLoopLocalKeyID.wrappingAdd(1, ordering: .relaxed).oldValue
    }
}
