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
    /// Whether the text is ASCII: its segments then end at its `/` bytes and compare byte by byte.
    let isASCII: Bool

    /// A pattern that matches every key.
    public static let all = KeyPattern("**")

    /// Reads a pattern. Every string is a valid pattern.
    public init(_ text: String) {
        self.text = text
        var fixed = 0
        var any = false
        let ascii = text.utf8.allSatisfy { $0 < 0x80 }
        if ascii {
            var length = 0
            var stars = 0
            for byte in text.utf8 {
                if byte == UInt8(ascii: "/") {
                    if length == 2 && stars == 2 { any = true } else { fixed += 1 }
                    length = 0
                    stars = 0
                } else {
                    length += 1
                    if byte == UInt8(ascii: "*") { stars += 1 }
                }
            }
            if length == 2 && stars == 2 { any = true } else { fixed += 1 }
        } else {
            for segment in text.split(separator: "/", omittingEmptySubsequences: false) {
                if segment == "**" { any = true } else { fixed += 1 }
            }
        }
        self.fixedSegmentCount = fixed
        self.hasAnyRun = any
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
        let segments = SplitKey(text)
        guard let first = (0..<segments.segmentCount).first(where: { segments.range(ofSegment: $0).isEmpty }) else {
            return nil
        }
        let problem =
            if segments.segmentCount == 1 { "is empty" }
            else if first == 0 { "starts with \"/\" (an empty first segment)" }
            else if first < segments.segmentCount - 1 { "has \"//\" (an empty segment)" }
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
    public func matches(_ key: String) -> Bool { matches(SplitKey(key)) }

    /// Whether `key` matches this pattern.
    func matches(_ key: SplitKey) -> Bool {
        if let result = key.text.utf8.withContiguousStorageIfAvailable({ matches(key, bytes: $0) }) { return result }
        return matches(key, bytes: nil)
    }

    /// Whether `key` matches this pattern, given the key's UTF-8 (`nil` when it is not contiguous).
    @inline(__always)
    func matches(_ key: SplitKey, bytes: UnsafeBufferPointer<UInt8>?) -> Bool {
        let count = key.segmentCount
        if hasAnyRun {
            if count < fixedSegmentCount { return false }
            if fixedSegmentCount == 0 { return true }
        } else if count != fixedSegmentCount {
            return false
        }
        if isASCII, let bytes,
            let result = text.utf8.withContiguousStorageIfAvailable({ Self.match($0, key, bytes) })
        {
            return result
        }
        return Self.match(Self.segments(of: text), key.segments())
    }

    // MARK: Matching

    /// Matches an ASCII pattern's UTF-8 against a split key, segment by segment, with backtracking
    /// to the last run of `**` (a run of them is one `**`).
    ///
    /// `p` is the offset of the pattern segment under way (`pattern.count + 1`: none left), `k` the
    /// index of the key segment.
    private static func match(
        _ pattern: UnsafeBufferPointer<UInt8>, _ key: SplitKey, _ keyBytes: UnsafeBufferPointer<UInt8>
    ) -> Bool {
        let past = pattern.count + 1
        let keyCount = key.segmentCount
        var p = 0
        var k = 0
        var afterAny = -1
        var anyK = 0
        while k < keyCount {
            if p < past {
                let end = segmentEnd(pattern, from: p)
                if isAny(pattern, p, end) {
                    afterAny = skipAnyRun(pattern, from: end + 1)
                    anyK = k
                    p = afterAny
                    continue
                }
                if (end - p == 1 && pattern[p] == UInt8(ascii: "*"))
                    || segment(pattern, p..<end, equals: key, k, keyBytes)
                {
                    p = end + 1
                    k += 1
                    continue
                }
            }
            guard afterAny >= 0 else { return false }
            p = afterAny
            anyK += 1
            k = anyK
        }
        return skipAnyRun(pattern, from: p) == past
    }

    /// The offset of the `/` that ends the segment starting at `start`, or the pattern's length.
    @inline(__always)
    private static func segmentEnd(_ pattern: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var i = start
        while i < pattern.count && pattern[i] != UInt8(ascii: "/") { i += 1 }
        return i
    }

    @inline(__always)
    private static func isAny(_ pattern: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Bool {
        end - start == 2 && pattern[start] == UInt8(ascii: "*") && pattern[start + 1] == UInt8(ascii: "*")
    }

    /// The offset of the first segment at or after `start` that is not `**` (`pattern.count + 1`: none).
    private static func skipAnyRun(_ pattern: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var p = start
        while p <= pattern.count {
            let end = segmentEnd(pattern, from: p)
            guard isAny(pattern, p, end) else { return p }
            p = end + 1
        }
        return p
    }

    /// Whether a literal segment of an ASCII pattern equals key segment `k`: byte by byte, or,
    /// for a key that is not ASCII, as `String`'s `==` decides (canonical equivalence: the Kelvin
    /// sign `K` equals the letter `K`).
    private static func segment(
        _ pattern: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, equals key: SplitKey, _ k: Int,
        _ keyBytes: UnsafeBufferPointer<UInt8>
    ) -> Bool {
        let keyRange = key.range(ofSegment: k)
        if keyRange.count == range.count {
            var i = 0
            while i < range.count && pattern[range.lowerBound + i] == keyBytes[keyRange.lowerBound + i] { i += 1 }
            if i == range.count { return true }
        }
        if key.isASCII { return false }
        return String(decoding: UnsafeBufferPointer(rebasing: pattern[range]), as: UTF8.self)
            == String(decoding: UnsafeBufferPointer(rebasing: keyBytes[keyRange]), as: UTF8.self)
    }

    /// The segments of a pattern, split as `String.split` splits them, with each run of `**` made one.
    private static func segments(of text: String) -> [Substring] {
        var segments: [Substring] = []
        for segment in text.split(separator: "/", omittingEmptySubsequences: false) {
            if segment == "**", segments.last == "**" { continue }
            segments.append(segment)
        }
        return segments
    }

    /// Matches segment by segment, comparing them as `String`'s `==` does; for patterns that are
    /// not ASCII.
    private static func match(_ pattern: [Substring], _ key: [Substring]) -> Bool {
        var p = 0
        var k = 0
        var afterAny = -1
        var anyK = 0
        while k < key.count {
            if p < pattern.count, pattern[p] == "**" {
                p += 1
                afterAny = p
                anyK = k
            } else if p < pattern.count, pattern[p] == "*" || pattern[p] == key[k] {
                p += 1
                k += 1
            } else if afterAny >= 0 {
                p = afterAny
                anyK += 1
                k = anyK
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == "**" { p += 1 }
        return p == pattern.count
    }
}

extension Sequence<KeyPattern> {
    /// Whether any of the patterns matches `key`, split once for all of them.
    func anyMatches(_ key: SplitKey) -> Bool {
        if let result = key.text.utf8.withContiguousStorageIfAvailable({ bytes in
            contains { $0.matches(key, bytes: bytes) }
        }) {
            return result
        }
        return contains { $0.matches(key, bytes: nil) }
    }
}
