/// A pattern over `/`-separated keys.
///
/// Segment by segment: `*` matches exactly one key segment, `**` matches any
/// number of segments (zero included), and any other segment matches itself.
/// `battery/*/state` matches `battery/BAT0/state`; `battery/**` matches
/// `battery`, `battery/BAT0` and `battery/BAT0/level`.
///
/// A pattern keeps its text and a few facts about it, so it costs about the bytes it is written
/// in; matching scans the text.
public struct KeyPattern: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The pattern as written.
    public let text: String
    /// How many segments are not `**`: a key needs exactly that many (at least that many when
    /// ``hasAnyRun``).
    let fixedSegmentCount: Int
    /// Whether some segment is `**`.
    let hasAnyRun: Bool
    /// Whether the text is ASCII: every `/` then ends a segment, and segments compare byte by byte.
    let isASCII: Bool

    /// A pattern that matches every key.
    public static let all = KeyPattern("**")

    /// Reads a pattern. Every string is a valid pattern.
    public init(_ text: String) {
        var copy = text
        let (ascii, counts) = copy.withUTF8 { bytes in
            let ascii = UTF8Scan.isASCII(bytes)
            return (ascii, ascii ? UTF8Scan.asciiSegmentCounts(bytes) : PatternBytes(bytes: bytes, isASCII: false).segmentCounts())
        }
        self.text = copy
        self.fixedSegmentCount = counts.fixed
        self.hasAnyRun = counts.hasAny
        self.isASCII = ascii
    }

    /// Reads a pattern written as a string literal, as ``init(_:)`` does.
    public init(stringLiteral value: String) { self.init(value) }

    /// The pattern as written (``text``).
    public var description: String { text }

    /// Whether two patterns are written the same way.
    public static func == (lhs: KeyPattern, rhs: KeyPattern) -> Bool { lhs.text == rhs.text }
    /// Hashes the pattern as written.
    public func hash(into hasher: inout Hasher) { hasher.combine(text) }

    /// What is wrong with `text` as a pattern for a service that refuses empty segments, or `nil`
    /// when nothing is.
    ///
    /// Every string is a valid pattern (an empty segment matches an empty key segment), but a
    /// service whose keys never have empty segments may refuse such patterns: the empty pattern,
    /// a leading or trailing `/`, or `//`. The message names the pattern.
    public static func emptySegmentProblem(in text: String) -> String? {
        // Split as matching splits it, so what is refused is what would match an empty key segment.
        var copy = text
        let empty = copy.withUTF8 { bytes -> (first: Int, segments: Int)? in
            if UTF8Scan.isASCII(bytes) { return UTF8Scan.asciiEmptySegment(bytes) }
            let split = SplitKey(text)
            var first = 0
            while first < split.segmentCount, !split.range(ofSegment: first).isEmpty { first &+= 1 }
            return first < split.segmentCount ? (first, split.segmentCount) : nil
        }
        guard let (first, segments) = empty else { return nil }
        let problem =
            if segments == 1 { "is empty" }
            else if first == 0 { "starts with \"/\" (an empty first segment)" }
            else if first < segments - 1 { "has \"//\" (an empty segment)" }
            else { "ends with \"/\" (an empty last segment)" }
        return "pattern \(text.debugDescription) \(problem)"
    }

    /// The bytes this pattern keeps: its own layout and, for a text too long to be stored in it,
    /// the text's UTF-8.
    package var storageByteCount: Int {
        let count = text.utf8.count
        return MemoryLayout<KeyPattern>.size + (count > 15 ? count : 0)
    }

    /// Whether `key` matches this pattern.
    public func matches(_ key: String) -> Bool {
        let split = SplitKey(key)
        return split.withBytes { matches(split, bytes: $0) }
    }

    /// Whether `key` matches this pattern, given the key's UTF-8.
    @inline(__always)
    func matches(_ key: SplitKey, bytes keyBytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = key.segmentCount
        if hasAnyRun {
            if count < fixedSegmentCount { return false }
            if fixedSegmentCount == 0 { return true }
        } else if count != fixedSegmentCount {
            return false
        }
        var text = self.text
        return text.withUTF8 { PatternBytes(bytes: $0, isASCII: isASCII).matches(key, keyBytes) }
    }
}

extension Sequence<KeyPattern> {
    /// Whether any of the patterns matches `key`, split once for all of them.
    func anyMatches(_ key: SplitKey) -> Bool {
        key.withBytes { bytes in contains { $0.matches(key, bytes: bytes) } }
    }
}
