/// A timer scheduled on a loop (`LoopContext.scheduleTimer(after:repeating:handler:)`).
///
/// A plain value: pass it back to the loop that made it to cancel the timer.
public struct LoopTimer: Sendable, Hashable {
    /// Identifies the timer within its loop.
    let id: UInt64
}
