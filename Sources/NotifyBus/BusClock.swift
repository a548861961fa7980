/// Where a bus takes the time of an event: a `Duration` since the bus started.
///
/// Every call that takes `at:` (publish, subscribe, suspend, resume) uses the
/// given time instead, which is how a replay runs on a virtual clock.
public struct BusClock: Sendable {
    /// Reads the current time.
    public let now: @Sendable () -> Duration

    /// A clock read by `now`.
    public init(now: @escaping @Sendable () -> Duration) { self.now = now }

    /// Time since this call on `ContinuousClock` (monotonic; it keeps counting while the machine sleeps).
    public static func continuous() -> BusClock {
        let start = ContinuousClock.now
        return BusClock { ContinuousClock.now - start }
    }

    /// A clock that always reads zero, for callers that pass `at:` themselves.
    public static let zero = BusClock { .zero }
}
