import NotifyBus

/// Seconds since the start of a log, kept in the JSON form it was written in
/// (`3` stays `3`, `0.5` stays `0.5`).
public struct LogTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The time as written: an `.integer` or a `.number`.
    public let json: JSONValue
    /// The time in seconds.
    public let seconds: Double

    /// A time from its JSON form; `nil` unless it is a finite, non-negative number.
    public init?(json: JSONValue) {
        guard let seconds = json.doubleValue, seconds.isFinite, seconds >= 0 else { return nil }
        self.json = json
        self.seconds = seconds
    }

    /// A time in seconds, written with microsecond precision (whole seconds as integers).
    public init(seconds: Double) {
        let micro = (max(0, seconds) * 1_000_000).rounded()
        self.seconds = micro / 1_000_000
        if micro.truncatingRemainder(dividingBy: 1_000_000) == 0, let whole = Int64(exactly: micro / 1_000_000) {
            self.json = .integer(whole)
        } else {
            self.json = .number(micro / 1_000_000)
        }
    }

    /// A time from a duration since the start of the log.
    public init(_ duration: Duration) {
        let (s, atto) = duration.components
        self.init(seconds: Double(s) + Double(atto) / 1e18)
    }

    public static let zero = LogTime(seconds: 0)

    /// The time as a duration since the start of the log.
    public var duration: Duration { .nanoseconds(Int64((seconds * 1e9).rounded())) }

    public var description: String { json.jsonText }

    public static func < (lhs: LogTime, rhs: LogTime) -> Bool { lhs.seconds < rhs.seconds }
    public static func == (lhs: LogTime, rhs: LogTime) -> Bool { lhs.seconds == rhs.seconds }
    public func hash(into hasher: inout Hasher) { hasher.combine(seconds) }
}
