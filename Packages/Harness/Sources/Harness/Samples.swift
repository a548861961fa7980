/// The values measured of one thing (nanoseconds, bytes, counts), in the order they were taken,
/// and what a report says of them: percentiles by nearest rank, the least and the most.
public struct Samples: Sendable, Equatable, ExpressibleByArrayLiteral {
    /// The values, in the order taken.
    public private(set) var values: [Int64]

    /// Samples of `values`.
    public init(_ values: some Sequence<Int64> = []) {
        self.values = Array(values)
    }

    /// Samples of `elements`.
    public init(arrayLiteral elements: Int64...) {
        values = elements
    }

    /// Samples of `durations`, in nanoseconds.
    public init(nanosecondsOf durations: some Sequence<Duration>) {
        values = durations.map(Self.nanoseconds)
    }

    /// Adds a value.
    public mutating func append(_ value: Int64) {
        values.append(value)
    }

    /// Adds a duration, in nanoseconds.
    public mutating func append(_ duration: Duration) {
        values.append(Self.nanoseconds(duration))
    }

    /// How many values there are.
    public var count: Int { values.count }

    /// Whether there are none.
    public var isEmpty: Bool { values.isEmpty }

    /// The values, least first.
    public var sorted: [Int64] { values.sorted() }

    /// The `fraction` percentile (0 < fraction ≤ 1) by nearest rank: the least value that at least
    /// `fraction` of the values do not exceed (of 50 values, p99 is the largest); 0 when empty.
    public func percentile(_ fraction: Double) -> Int64 {
        values.percentile(fraction) ?? 0
    }

    /// The median (p50).
    public var p50: Int64 { percentile(0.5) }
    /// p90.
    public var p90: Int64 { percentile(0.9) }
    /// p99.
    public var p99: Int64 { percentile(0.99) }
    /// The least value (0 when empty).
    public var min: Int64 { values.min() ?? 0 }
    /// The largest value (0 when empty).
    public var max: Int64 { values.max() ?? 0 }
    /// The sum of the values.
    public var sum: Int64 { values.reduce(0, +) }

    /// A duration in nanoseconds.
    static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }
}

extension Collection where Element: Comparable {
    /// The `fraction` percentile (0 < fraction ≤ 1) of the elements by nearest rank, as `Samples`
    /// takes it (for values that are not whole numbers: ratios); `nil` when there are none.
    public func percentile(_ fraction: Double) -> Element? {
        let sorted = self.sorted()
        guard !sorted.isEmpty else { return nil }
        let rank = Int((Double(sorted.count) * fraction).rounded(.up))
        return sorted[Swift.min(sorted.count - 1, Swift.max(0, rank - 1))]
    }
}
