/// Bytes written as escapes in system files and names: `\040` in `/proc/self/mountinfo` (octal),
/// `\x2d` in systemd's unit names (hexadecimal).
package enum ByteEscapes {
    /// `text` with every `marker` followed by exactly `digits` digits of `radix` replaced by the
    /// byte they stand for; anything else, a marker without its digits included, stays as it is.
    package static func decode(_ text: Substring, marker: String, digits: Int, radix: Int) -> String {
        let marker = Array(marker.utf8)
        let bytes = Array(text.utf8)
        guard let first = marker.first, bytes.contains(first) else { return String(text) }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let end = index + marker.count + digits
            if end <= bytes.count, bytes[index..<(index + marker.count)].elementsEqual(marker),
                let value = UInt8(String(decoding: bytes[(index + marker.count)..<end], as: UTF8.self), radix: radix),
                bytes[(index + marker.count)..<end].allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "-") })
            {
                result.append(value)
                index = end
            } else {
                result.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: result, as: UTF8.self)
    }
}
