/// A pattern's UTF-8, read segment by segment: how a `KeyPattern` matches while keeping nothing
/// but its text.
///
/// A segment ends where `String.split(separator: "/")` ends it: at a `/` that is a `Character` of
/// its own. In ASCII text that is every `/` byte. Elsewhere a `/` that a combining mark follows,
/// or that follows a prepended mark, is part of a larger `Character` and ends nothing; the
/// scalars on either side of it decide, so no byte is read twice to find out.
///
/// Every step reads only a bounded part of the text: a wildcard is told by its first three bytes,
/// and a literal segment is compared with the key segment it is tried against, so reading stops
/// at the first byte that differs. Tried against a key of a few short segments, a pattern of
/// any length costs about as much as a short one.
struct PatternBytes {
    /// What a segment is, and where the one that is a wildcard ends.
    enum Segment {
        /// `**`, ending at `end` (the offset of the `/` after it, or the text's length).
        case any(end: Int)
        /// `*`, ending at `end`.
        case one(end: Int)
        /// Any other segment.
        case literal
    }

    let bytes: UnsafeBufferPointer<UInt8>
    /// Whether the text is ASCII: every `/` then ends a segment, and literal segments compare byte by byte.
    let isASCII: Bool

    /// The offset just past the last segment: a cursor there has no segment left.
    var past: Int { bytes.count + 1 }

    /// Whether the byte at `i` is a `/` that ends a segment.
    @inline(__always)
    func isSeparator(_ i: Int) -> Bool {
        bytes[i] == UInt8(ascii: "/") && (isASCII || standsAlone(i))
    }

    /// Whether the `/` at `i` is a `Character` of its own: decided by the scalar before it (a
    /// prepended mark joins it) and the one after it (a combining mark, a joiner or a spacing mark
    /// joins it), as grapheme breaking decides.
    private func standsAlone(_ i: Int) -> Bool {
        let before = i > 0 ? bytes[i - 1] : 0
        let after = i + 1 < bytes.count ? bytes[i + 1] : 0
        if before < 0x80 && after < 0x80 { return true }
        var start = i
        if i > 0 {
            start -= 1
            while start > 0 && bytes[start] & 0xC0 == 0x80 { start -= 1 }
        }
        var end = i + 1
        if end < bytes.count {
            end += 1
            while end < bytes.count && bytes[end] & 0xC0 == 0x80 { end += 1 }
        }
        let around = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        return around.contains(Character("/"))
    }

    /// The offset of the first `/` ending a segment at or after `start` and before `limit`, or `limit`.
    @inline(__always)
    func segmentEnd(from start: Int, limit: Int) -> Int {
        var i = start
        while i < limit && !isSeparator(i) { i += 1 }
        return i
    }

    /// What the segment starting at `p` is (`p` at most the text's length).
    @inline(__always)
    func segment(at p: Int) -> Segment {
        let count = bytes.count
        guard p < count && bytes[p] == UInt8(ascii: "*") else { return .literal }
        if p + 1 == count || isSeparator(p + 1) { return .one(end: p + 1) }
        if bytes[p + 1] == UInt8(ascii: "*") && (p + 2 == count || isSeparator(p + 2)) { return .any(end: p + 2) }
        return .literal
    }

    /// The offset of the first segment at or after `start` that is not `**` (``past``: none).
    func skipAnyRun(from start: Int) -> Int {
        var p = start
        while p < past, case .any(let end) = segment(at: p) { p = end + 1 }
        return p
    }

    /// How many segments are not `**`, and whether some segment is.
    func segmentCounts() -> (fixed: Int, hasAny: Bool) {
        var fixed = 0
        var hasAny = false
        var p = 0
        while p < past {
            switch segment(at: p) {
            case .any(let end):
                hasAny = true
                p = end + 1
            case .one(let end):
                fixed += 1
                p = end + 1
            case .literal:
                fixed += 1
                p = segmentEnd(from: p, limit: bytes.count) + 1
            }
        }
        return (fixed, hasAny)
    }

    /// Whether `key` (its UTF-8 in `keyBytes`) matches, segment by segment, with backtracking to
    /// the last run of `**` (a run of them is one `**`).
    ///
    /// `p` is the offset of the pattern segment under way, `k` the index of the key segment.
    func matches(_ key: SplitKey, _ keyBytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let keyCount = key.segmentCount
        var p = 0
        var k = 0
        var afterAny = -1
        var anyK = 0
        while k < keyCount {
            if p < past {
                switch segment(at: p) {
                case .any(let end):
                    afterAny = skipAnyRun(from: end + 1)
                    anyK = k
                    p = afterAny
                    continue
                case .one(let end):
                    p = end + 1
                    k += 1
                    continue
                case .literal:
                    if let end = literal(at: p, equals: key, k, keyBytes) {
                        p = end + 1
                        k += 1
                        continue
                    }
                }
            }
            guard afterAny >= 0 else { return false }
            p = afterAny
            anyK += 1
            k = anyK
        }
        return skipAnyRun(from: p) == past
    }

    /// Where the literal segment at `p` ends, if it equals key segment `k`: byte for byte, or as
    /// `String`'s `==` decides (canonical equivalence: the Kelvin sign `K` equals the letter `K`)
    /// when either is not ASCII.
    private func literal(
        at p: Int, equals key: SplitKey, _ k: Int, _ keyBytes: UnsafeBufferPointer<UInt8>
    ) -> Int? {
        let range = key.range(ofSegment: k)
        let n = range.count
        if p + n <= bytes.count {
            var i = 0
            while i < n && bytes[p + i] == keyBytes[range.lowerBound + i] { i += 1 }
            if i == n && (p + n == bytes.count || isSeparator(p + n)) { return p + n }
        }
        if isASCII && key.isASCII { return nil }
        let limit: Int
        if key.isASCII || Self.isASCII(keyBytes, range) {
            // A text that is not ASCII equals an ASCII one only through the three scalars whose
            // canonical decomposition is ASCII: the Kelvin sign (K), the Greek question mark (;)
            // and the Greek varia (`), each at most 3 bytes. Without them the bytes decided.
            if isASCII || !Self.containsCanonicalTarget(keyBytes, range) { return nil }
            limit = min(bytes.count, p + 3 * n + 1)
        } else {
            // Canonically equivalent texts differ in length by a bounded factor (at most 4 bytes
            // a scalar, at most 4 scalars a canonical decomposition): a pattern segment much
            // longer than the key segment cannot equal it, and is not read past that.
            limit = min(bytes.count, p + 32 * (n + 1))
        }
        let end = segmentEnd(from: p, limit: limit)
        guard end == bytes.count || isSeparator(end) else { return nil }
        let segment = String(decoding: UnsafeBufferPointer(rebasing: bytes[p..<end]), as: UTF8.self)
        let keySegment = String(decoding: UnsafeBufferPointer(rebasing: keyBytes[range]), as: UTF8.self)
        return segment == keySegment ? end : nil
    }

    /// Whether those bytes are ASCII.
    private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        range.allSatisfy { bytes[$0] < 0x80 }
    }

    /// Whether the ASCII text has a `K`, `;` or `` ` ``: what a scalar other than itself can be
    /// canonically equivalent to.
    private static func containsCanonicalTarget(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        range.contains { bytes[$0] == UInt8(ascii: "K") || bytes[$0] == UInt8(ascii: ";") || bytes[$0] == UInt8(ascii: "`") }
    }
}
