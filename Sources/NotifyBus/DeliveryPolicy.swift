/// What a subscriber is given for the events published while it is suspended.
public enum DeliveryPolicy: String, Sendable, Hashable, CaseIterable {
    /// One notification per key on resume: the latest value, with the count of events it stands for.
    case latest
    /// As `latest`, but never a notification whose value equals the one this subscriber last received.
    case changed
    /// No collapsing: every held event is delivered on resume, in order.
    case all
    /// Events while suspended are discarded; resume delivers nothing.
    case drop
}

/// What a new subscription receives before any new event.
public enum InitialDelivery: String, Sendable, Hashable {
    /// Nothing: only events published after subscribing.
    case none
    /// The latest known value of every matching key, in order of each key's latest event, `coalesced` 0.
    case current
}
