package import NotifyBus

/// The topic layout of specification: Publishing a fleet to MQTT: one topic per key, `<prefix>/<host-id>/<key>`, the key's
/// MQTT wildcards and `%` escaped, and `<prefix>/<host-id>/$online` for the host's availability.
package enum MQTTTopic {
    /// The last level of a host's availability topic.
    package static let onlineLevel = "$online"

    /// `key` as topic levels: `+`, `#`, `%` and NUL become `%2B`, `%23`, `%25` and `%00`;
    /// everything else, `/` included, stays.
    package static func escape(_ key: String) -> String {
        var needs = false
        for byte in key.utf8 where byte == 0x2B || byte == 0x23 || byte == 0x25 || byte == 0 {
            needs = true
            break
        }
        guard needs else { return key }
        var out = ""
        out.reserveCapacity(key.utf8.count + 8)
        for character in key.unicodeScalars {
            switch character {
            case "+": out += "%2B"
            case "#": out += "%23"
            case "%": out += "%25"
            case "\0": out += "%00"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    /// The key an escaped topic tail stands for: `%2B`, `%23`, `%25` and `%00` (either case of
    /// hex digits) become `+`, `#`, `%` and NUL; any other `%` stays as it is.
    package static func unescape(_ text: String) -> String {
        guard text.utf8.contains(0x25) else { return text }
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == 0x25, index + 2 < bytes.count {
                let second = bytes[index + 2]
                // `%2B` or `%2b`: only a letter is lowered.
                let pair = (bytes[index + 1], (0x41...0x5A).contains(second) ? second | 0x20 : second)
                let decoded: UInt8? =
                    switch pair {
                    case (0x32, 0x62): 0x2B  // 2B
                    case (0x32, 0x33): 0x23  // 23
                    case (0x32, 0x35): 0x25  // 25
                    case (0x30, 0x30): 0x00  // 00
                    default: nil
                    }
                if let decoded {
                    out.append(decoded)
                    index += 3
                    continue
                }
            }
            out.append(bytes[index])
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The topic of `key` for `hostID` under `prefix`.
    package static func topic(prefix: String, hostID: String, key: String) -> String {
        "\(prefix)/\(hostID)/\(escape(key))"
    }

    /// The availability topic of `hostID` under `prefix`.
    package static func onlineTopic(prefix: String, hostID: String) -> String {
        "\(prefix)/\(hostID)/\(onlineLevel)"
    }

    /// What is wrong with `hostID` as one topic level, or `nil`: it must be non-empty and hold no
    /// `/`, `+`, `#` or NUL.
    package static func hostIDProblem(_ hostID: String) -> String? {
        if hostID.isEmpty { return "the host id is empty" }
        for (byte, name) in [(UInt8(ascii: "/"), "/"), (UInt8(ascii: "+"), "+"), (UInt8(ascii: "#"), "#"), (0, "NUL")]
        where hostID.utf8.contains(byte) {
            return "the host id \"\(hostID)\" contains \(name)"
        }
        return nil
    }

    /// What is wrong with `prefix` as the first levels of every topic, or `nil`: non-empty, no
    /// `+`, `#` or NUL, and neither starting nor ending with `/`.
    package static func prefixProblem(_ prefix: String) -> String? {
        if prefix.isEmpty { return "the prefix is empty" }
        for (byte, name) in [(UInt8(ascii: "+"), "+"), (UInt8(ascii: "#"), "#"), (0, "NUL")] where prefix.utf8.contains(byte) {
            return "the prefix \"\(prefix)\" contains \(name), an MQTT wildcard"
        }
        if prefix.hasPrefix("/") || prefix.hasSuffix("/") {
            return "the prefix \"\(prefix)\" starts or ends with /"
        }
        return nil
    }

    /// The subscription filter that receives every key `pattern` matches (and possibly more:
    /// `**` before the last segment widens to `#`; match the unescaped key afterwards).
    package static func filter(for pattern: KeyPattern) -> String {
        var levels: [String] = []
        for segment in pattern.text.split(separator: "/", omittingEmptySubsequences: false) {
            switch segment {
            case "*": levels.append("+")
            case "**":
                levels.append("#")
                return levels.joined(separator: "/")
            default: levels.append(escape(String(segment)))
            }
        }
        return levels.joined(separator: "/")
    }
}
