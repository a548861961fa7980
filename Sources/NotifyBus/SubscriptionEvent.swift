/// What a subscription yields: notifications and the lifecycle marks between them.
public enum SubscriptionEvent: Sendable, Hashable {
    /// A notification for one key.
    case notification(BusNotification)
    /// The subscriber was suspended; events are now held per its policy.
    case suspended(time: Duration)
    /// The subscriber was resumed; `flushed` notifications follow (after a `resync` mark, if any).
    case resumed(time: Duration, flushed: Int)
    /// The subscriber lost track (it held more than its limit), or asked for every value again
    /// (``Subscription/resync(at:)``); every current value follows.
    case resync(time: Duration, reason: ResyncReason)

    /// The notification, when this is one.
    public var notification: BusNotification? {
        if case .notification(let n) = self { return n }
        return nil
    }
}

/// Why a subscriber is sent every current value.
public enum ResyncReason: String, Sendable, Hashable {
    /// A suspended (or slow) subscriber would have needed more than its `limit` entries (or more
    /// than its budget had room for).
    case limit
    /// The subscriber asked for every current value (``Subscription/resync(at:)``), as a client
    /// that saw a gap in what it received does.
    case requested
}
