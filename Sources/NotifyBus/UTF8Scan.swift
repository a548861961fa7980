/// Scans over UTF-8 that keys and patterns share: eight bytes at a time where it can, so a
/// service that checks 64 patterns of 1 KiB per call spends little on it.
enum UTF8Scan {
    /// Whether every byte of `bytes` is ASCII.
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        let count = bytes.count
        var high: UInt64 = 0
        var i = 0
        while i &+ 8 <= count {
            high |= raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i &+= 8
        }
        while i < count {
            high |= UInt64(base[i])
            i &+= 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }

    /// The offsets of the `/` bytes of `bytes`, in order.
    static func slashes(_ bytes: UnsafeBufferPointer<UInt8>, into offsets: inout [UInt32]) {
        forEachSlash(bytes) { offsets.append(UInt32(truncatingIfNeeded: $0)) }
    }

    /// How many segments of the ASCII pattern `bytes` are not `**`, and whether some segment is.
    static func asciiSegmentCounts(_ bytes: UnsafeBufferPointer<UInt8>) -> (fixed: Int, hasAny: Bool) {
        guard let base = bytes.baseAddress else { return (1, false) }
        let count = bytes.count
        var segments = 1
        var anyRuns = 0
        var start = 0
        var i = nextSlash(base, count, from: 0)
        while i < count {
            if i &- start == 2 && base[start] == UInt8(ascii: "*") && base[start &+ 1] == UInt8(ascii: "*") { anyRuns &+= 1 }
            segments &+= 1
            start = i &+ 1
            i = nextSlash(base, count, from: start)
        }
        if count &- start == 2 && base[start] == UInt8(ascii: "*") && base[start &+ 1] == UInt8(ascii: "*") { anyRuns &+= 1 }
        return (segments &- anyRuns, anyRuns > 0)
    }

    /// Where the ASCII text `bytes` has an empty segment: `nil` for none, else the index of the
    /// first empty one and how many segments there are.
    static func asciiEmptySegment(_ bytes: UnsafeBufferPointer<UInt8>) -> (first: Int, segments: Int)? {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return (0, 1) }
        let count = bytes.count
        var segments = 1
        var first: Int?
        var start = 0
        var i = nextSlash(base, count, from: 0)
        while i < count {
            if i == start, first == nil { first = segments &- 1 }
            segments &+= 1
            start = i &+ 1
            i = nextSlash(base, count, from: start)
        }
        if start == count, first == nil { first = segments &- 1 }
        return first.map { ($0, segments) }
    }

    /// The offset of the first `/` at or after `start` in the `count` bytes at `base`, or `count`.
    @inline(__always)
    private static func nextSlash(_ base: UnsafePointer<UInt8>, _ count: Int, from start: Int) -> Int {
        let raw = UnsafeRawPointer(base)
        var i = start
        // A word has a `/` where (word ^ 0x2f2f…) has a zero byte.
        while i &+ 8 <= count {
            let word = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) ^ 0x2F2F_2F2F_2F2F_2F2F
            if (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080 != 0 { break }
            i &+= 8
        }
        while i < count && base[i] != UInt8(ascii: "/") { i &+= 1 }
        return i
    }

    /// Calls `body` with the offset of each `/` byte of `bytes`, in order.
    @inline(__always)
    private static func forEachSlash(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (Int) -> Void) {
        guard let base = bytes.baseAddress else { return }
        let raw = UnsafeRawPointer(base)
        let count = bytes.count
        var i = 0
        // A word has a `/` where (word ^ 0x2f2f…) has a zero byte.
        while i &+ 8 <= count {
            let word = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) ^ 0x2F2F_2F2F_2F2F_2F2F
            if (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080 != 0 {
                var j = i
                while j < i &+ 8 {
                    if base[j] == UInt8(ascii: "/") { body(j) }
                    j &+= 1
                }
            }
            i &+= 8
        }
        while i < count {
            if base[i] == UInt8(ascii: "/") { body(i) }
            i &+= 1
        }
    }
}
