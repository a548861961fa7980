/// A JSON number kept as the text it was written in: a number that neither `Int64` nor a
/// finite `Double` holds as written.
///
/// The parser makes one for an integer past 64 bits (`99999999999999999999`,
/// `-9223372036854775809`), for a number past `Double`'s range (`1e400`, `-1e400`) and for a
/// nonzero number below its smallest magnitude (`1e-400`). It prints exactly as written.
/// It compares by exact value with every JSON number, as Python's `json` module and
/// arbitrary-precision readers do: `100000000000000000000` equals `1e20` (that `Double`
/// holds the integer exactly) and `99999999999999999999` does not.
public struct JSONDecimal: Sendable, Hashable, CustomStringConvertible {
    /// The number's JSON text, as written.
    public let text: String

    /// The number written as `text`, which must be one JSON number (RFC 8259 §6) without
    /// surrounding space; `nil` otherwise.
    public init?(_ text: some StringProtocol) {
        var scanner = NumberScanner(utf8: Array(text.utf8))
        guard scanner.scan(), scanner.index == scanner.utf8.count else { return nil }
        self.text = String(text)
    }

    /// A number the parser has already checked.
    init(checked text: String) { self.text = text }

    /// The nearest `Double`: infinite past `Double`'s range, zero below its smallest magnitude.
    public var doubleValue: Double { Double(text) ?? .nan }

    /// The text as written.
    public var description: String { text }

    /// The exact value: digits and a power of ten.
    var exactValue: ExactDecimal { ExactDecimal(numberText: text) }

    /// Whether both are the same number, by exact value (`1E2` equals `100`).
    public static func == (lhs: JSONDecimal, rhs: JSONDecimal) -> Bool {
        lhs.text == rhs.text || lhs.exactValue == rhs.exactValue
    }

    /// Hashes the exact value, as `JSONValue` does for the number.
    public func hash(into hasher: inout Hasher) { hasher.combine(JSONValue.decimal(self)) }
}

/// The grammar of a JSON number (RFC 8259 §6) over UTF-8 bytes.
struct NumberScanner {
    let utf8: [UInt8]
    var index = 0

    /// Consumes one number from `index`; false when the bytes there are not one.
    mutating func scan() -> Bool {
        if peek("-") { index += 1 }
        guard digit() else { return false }
        if utf8[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while digit() { index += 1 }
        }
        if peek(".") {
            index += 1
            guard digit() else { return false }
            while digit() { index += 1 }
        }
        if peek("e") || peek("E") {
            index += 1
            if peek("+") || peek("-") { index += 1 }
            guard digit() else { return false }
            while digit() { index += 1 }
        }
        return true
    }

    func peek(_ c: Unicode.Scalar) -> Bool { index < utf8.count && utf8[index] == UInt8(ascii: c) }
    func digit() -> Bool { index < utf8.count && utf8[index] >= 0x30 && utf8[index] <= 0x39 }
}
