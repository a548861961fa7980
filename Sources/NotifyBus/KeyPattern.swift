/// A pattern over `/`-separated keys.
///
/// Segment by segment: `*` matches exactly one key segment, `**` matches any
/// number of segments (zero included), and any other segment matches itself.
/// `battery/*/state` matches `battery/BAT0/state`; `battery/**` matches
/// `battery`, `battery/BAT0` and `battery/BAT0/level`.
public struct KeyPattern: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    enum Segment: Sendable, Hashable {
        case literal(Substring)
        case one
        case any
    }

    /// The pattern as written.
    public let text: String
    let segments: [Segment]

    /// A pattern that matches every key.
    public static let all = KeyPattern("**")

    /// Reads a pattern. Every string is a valid pattern.
    public init(_ text: String) {
        self.text = text
        self.segments = text.split(separator: "/", omittingEmptySubsequences: false).map {
            switch $0 {
            case "*": .one
            case "**": .any
            default: .literal($0)
            }
        }
    }

    /// Reads a pattern written as a string literal, as ``init(_:)`` does.
    public init(stringLiteral value: String) { self.init(value) }

    /// The pattern as written (``text``).
    public var description: String { text }

    /// Whether two patterns are written the same way.
    public static func == (lhs: KeyPattern, rhs: KeyPattern) -> Bool { lhs.text == rhs.text }
    /// Hashes the pattern as written.
    public func hash(into hasher: inout Hasher) { hasher.combine(text) }

    /// Whether `key` matches this pattern.
    public func matches(_ key: String) -> Bool {
        let parts = key.split(separator: "/", omittingEmptySubsequences: false)
        // Wildcard matching with backtracking to the last `**`.
        var p = 0, k = 0
        var starP = -1, starK = 0
        while k < parts.count {
            if p < segments.count, case .any = segments[p] {
                starP = p
                starK = k
                p += 1
            } else if p < segments.count, Self.matchesOne(segments[p], parts[k]) {
                p += 1
                k += 1
            } else if starP >= 0 {
                p = starP + 1
                starK += 1
                k = starK
            } else {
                return false
            }
        }
        while p < segments.count, case .any = segments[p] { p += 1 }
        return p == segments.count
    }

    private static func matchesOne(_ segment: Segment, _ part: Substring) -> Bool {
        switch segment {
        case .one: true
        case .any: false
        case .literal(let s): s == part
        }
    }
}

extension Sequence<KeyPattern> {
    /// Whether any of the patterns matches `key`.
    func anyMatches(_ key: String) -> Bool { contains { $0.matches(key) } }
}
