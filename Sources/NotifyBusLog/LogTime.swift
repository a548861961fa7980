public import NotifyBus

/// Seconds since the start of a log, kept in the JSON form it was written in
/// (`3` stays `3`, `0.5` stays `0.5`).
public struct LogTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The time as written: an `.integer` or a `.number`.
    public let json: JSONValue
    /// The time in seconds.
    public let seconds: Double

    /// The latest time a log can hold: what a `Duration` of nanoseconds in 64 bits reaches
    /// (about 292 years).
    public static let maximumSeconds: Double = 9_223_372_036

    /// A time from its JSON form; `nil` unless it is a number from 0 to `maximumSeconds`.
    public init?(json: JSONValue) {
        guard let seconds = json.doubleValue, seconds >= 0, seconds <= Self.maximumSeconds else { return nil }
        self.json = json
        self.seconds = seconds
    }

    /// A time in seconds, written with microsecond precision (whole seconds as integers).
    public init(seconds: Double) {
        let micro = (min(max(0, seconds), Self.maximumSeconds) * 1_000_000).rounded()
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

    /// The start of the log: `0` seconds.
    public static let zero = LogTime(seconds: 0)

    /// The time as a duration since the start of the log.
    public var duration: Duration { .nanoseconds(Int64((seconds * 1e9).rounded())) }

    /// The time as written in the log, for example `3` or `0.5`.
    public var description: String { json.jsonText }

    /// Whether `lhs` is earlier than `rhs`.
    public static func < (lhs: LogTime, rhs: LogTime) -> Bool { lhs.seconds < rhs.seconds }
    /// Whether two times are the same number of seconds, however written (`3` equals `3.0`).
    public static func == (lhs: LogTime, rhs: LogTime) -> Bool { lhs.seconds == rhs.seconds }
    /// Hashes the number of seconds, consistently with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(seconds) }
}
