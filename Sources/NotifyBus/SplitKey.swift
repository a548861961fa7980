/// A key split into its `/`-separated segments, once, so that matching it against any number of
/// patterns splits it only once.
///
/// It keeps where each segment ends in the key's UTF-8. A key that is ASCII is split at its `/`
/// bytes; any other key is split as `String.split(separator: "/")` splits it, by `Character`, so a
/// `/` that a combining mark follows (one character, not `/`) does not end a segment.
struct SplitKey {
    /// The key.
    let text: String
    /// The offset in the key's UTF-8 of the end of each segment: the `/` after it, or the key's length.
    let ends: [UInt32]
    /// Whether the key is ASCII: its segments then compare with a pattern's byte by byte.
    let isASCII: Bool

    init(_ text: String) {
        var copy = text
        var ends: [UInt32] = []
        let ascii = copy.withUTF8 { bytes in
            guard UTF8Scan.isASCII(bytes) else { return false }
            UTF8Scan.slashes(bytes, into: &ends)
            ends.append(UInt32(truncatingIfNeeded: bytes.count))
            return true
        }
        self.text = copy
        if !ascii {
            let utf8 = text.utf8
            for segment in text.split(separator: "/", omittingEmptySubsequences: false) {
                ends.append(UInt32(truncatingIfNeeded: utf8.distance(from: utf8.startIndex, to: segment.endIndex)))
            }
        }
        self.ends = ends
        self.isASCII = ascii
    }

    /// How many segments the key has (at least one: the empty key has one empty segment).
    @inline(__always)
    var segmentCount: Int { ends.count }

    /// Where segment `i` is in the key's UTF-8.
    @inline(__always)
    func range(ofSegment i: Int) -> Range<Int> {
        (i == 0 ? 0 : Int(ends[i &- 1]) &+ 1)..<Int(ends[i])
    }

    /// Calls `body` with the key's UTF-8.
    @inline(__always)
    func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        var text = self.text
        return text.withUTF8(body)
    }
}
