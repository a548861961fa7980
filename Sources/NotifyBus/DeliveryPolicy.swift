/// What a subscriber is given for the events published while it is suspended.
///
/// A subscriber that is active receives every event under every policy; the
/// policy decides what a suspension turns into on resume. Its raw value is the
/// policy's name in event logs and on the command line (`"latest"`, `"changed"`,
/// `"all"`, `"drop"`). See <doc:DeliverySemantics>.
public enum DeliveryPolicy: String, Sendable, Hashable, CaseIterable {
    /// One notification per key on resume: the latest value, with the count of events it stands for.
    case latest
    /// As ``latest``, but never a notification whose value equals the one this subscriber last received.
    ///
    /// The filter applies to live notifications too, and it compares with the value
    /// *received*: a key that went A → B → A while suspended gives no notification.
    case changed
    /// No collapsing: every held event is delivered on resume, in order, each with `coalesced` 1.
    case all
    /// Events while suspended are discarded; resume delivers nothing.
    case drop
}

/// What a new subscription receives before any new event.
///
/// Its raw value is the name used by event logs (`"initial": "current"`).
public enum InitialDelivery: String, Sendable, Hashable {
    /// Nothing: only events published after subscribing.
    case none
    /// The latest known value of every matching key, in order of each key's latest event, `coalesced` 0.
    case current
}
