#if NOTIFYBUS_TSAN
// ThreadSanitizer cannot see the hand-off of a contended `Mutex` on Linux (it
// uses priority-inheritance futexes: the kernel passes ownership to the waiter,
// with no user-space atomic that TSan could observe), so it reports races on
// state that the lock does protect. In sanitizer builds (`-DNOTIFYBUS_TSAN`)
// the lock's critical sections also tell TSan about the happens-before edge.
@_silgen_name("__tsan_acquire") private func tsanAcquire(_ address: UnsafeRawPointer)
@_silgen_name("__tsan_release") private func tsanRelease(_ address: UnsafeRawPointer)
#endif

import Synchronization

extension NotificationBus {
    /// Runs `body` with the bus state, under the bus's one lock.
    @inline(__always)
    func withState<Result>(_ body: (inout sending BusState) -> sending Result) -> sending Result {
        state.withLock { state in
            #if NOTIFYBUS_TSAN
            let token = UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
            tsanAcquire(token)
            defer { tsanRelease(token) }
            #endif
            return body(&state)
        }
    }
}
