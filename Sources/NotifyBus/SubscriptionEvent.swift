/// What a subscription yields: notifications and the lifecycle marks between them.
public enum SubscriptionEvent: Sendable, Hashable {
    /// A notification for one key.
    case notification(BusNotification)
    /// The subscriber was suspended; events are now held per its policy.
    case suspended(time: Duration)
    /// The subscriber was resumed; `flushed` notifications follow (after a `resync` mark, if any).
    case resumed(time: Duration, flushed: Int)
    /// The subscriber lost track (it held more than its limit); every current value follows.
    case resync(time: Duration, reason: ResyncReason)

    /// The notification, when this is one.
    public var notification: BusNotification? {
        if case .notification(let n) = self { return n }
        return nil
    }
}

/// Why a subscriber is sent every current value.
public enum ResyncReason: String, Sendable, Hashable {
    /// A suspended (or slow) subscriber would have needed more than its `limit` entries.
    case limit
}
