/// One notification delivered to a subscriber: a key, its value, and what it stands for.
///
/// A live notification stands for one event (``coalesced`` 1). A notification
/// flushed on resume stands for every event its key had while the subscriber was
/// suspended: it carries the latest value and their count. A current value
/// (``Kind/initial`` or ``Kind/resync``) stands for no event (``coalesced`` 0).
/// See <doc:DeliverySemantics>.
public struct BusNotification: Sendable, Hashable {
    /// How the notification came about.
    public enum Kind: Sendable, Hashable {
        /// An event delivered while the subscriber was active (`coalesced` 1).
        case live
        /// The net change of a key, flushed on resume.
        case flushed
        /// An active subscriber fell behind its high-water mark and its backlog was collapsed per key.
        case collapsed
        /// The current value, given on subscribing with ``InitialDelivery/current`` (`coalesced` 0).
        case initial
        /// The current value, given after a `resync` because the subscriber lost track or asked for
        /// every value (`coalesced` 0).
        case resync
    }

    /// The key, for example `battery/BAT0/state`.
    public let key: String
    /// The latest value of the key that this notification carries.
    public let value: JSONValue
    /// The value this subscriber last received for the key; `nil` when it has received none.
    public let previous: JSONValue?
    /// How many published events this notification stands for (0 for a current value).
    public let coalesced: Int
    /// When the first event it stands for was published (for `coalesced` 0: when the value was set).
    public let firstEventTime: Duration
    /// When the last event it stands for was published (for `coalesced` 0: when the value was set).
    public let lastEventTime: Duration
    /// When it was delivered: the event's time when live, otherwise the resume's or subscribe's time.
    public let time: Duration
    /// How it came about.
    public let kind: Kind

    /// Creates a notification from its fields, for tests and tools that build the
    /// notifications they expect; a bus makes its own.
    public init(
        key: String, value: JSONValue, previous: JSONValue?, coalesced: Int,
        firstEventTime: Duration, lastEventTime: Duration, time: Duration, kind: Kind
    ) {
        self.key = key
        self.value = value
        self.previous = previous
        self.coalesced = coalesced
        self.firstEventTime = firstEventTime
        self.lastEventTime = lastEventTime
        self.time = time
        self.kind = kind
    }
}
