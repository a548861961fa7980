/// Why JSON text could not be parsed, and where.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, in words.
    public var message: String
    /// The 1-based column (in bytes) where the problem was found.
    public var column: Int

    /// The message and the column, for example `unexpected end of text in an object at column 12`.
    public var description: String { "\(message) at column \(column)" }
}

extension JSONValue {
    /// Parses one JSON value; only white space may follow it.
    ///
    /// Nesting deeper than 512 levels is refused rather than risk the stack.
    public init(parsing text: String) throws(JSONParseError) {
        var text = text
        let result = text.withUTF8 { bytes -> Result<JSONValue, JSONParseError> in
            var parser = JSONParser(bytes: bytes)
            do throws(JSONParseError) { return .success(try parser.parseDocument()) } catch { return .failure(error) }
        }
        self = try result.get()
    }

    /// Parses one JSON value from UTF-8 bytes; only white space may follow it.
    public init(parsing bytes: some Collection<UInt8>) throws(JSONParseError) {
        let array = Array(bytes)
        let result = array.withUnsafeBufferPointer { buffer -> Result<JSONValue, JSONParseError> in
            var parser = JSONParser(bytes: buffer)
            do throws(JSONParseError) { return .success(try parser.parseDocument()) } catch { return .failure(error) }
        }
        self = try result.get()
    }
}

/// A strict RFC 8259 parser over UTF-8 bytes.
struct JSONParser {
    static let maxDepth = 512
    let bytes: UnsafeBufferPointer<UInt8>
    var i = 0
    var depth = 0

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        skipSpace()
        let v = try parseValue()
        skipSpace()
        if i < bytes.count { throw fail("unexpected \(describeByte()) after the value") }
        return v
    }

    func fail(_ message: String) -> JSONParseError { JSONParseError(message: message, column: i + 1) }

    func describeByte() -> String {
        guard i < bytes.count else { return "end of text" }
        let b = bytes[i]
        if b >= 0x21 && b < 0x7F { return "'\(Character(Unicode.Scalar(b)))'" }
        return "byte 0x\(String(b, radix: 16))"
    }

    mutating func skipSpace() {
        while i < bytes.count {
            switch bytes[i] {
            case 0x20, 0x09, 0x0A, 0x0D: i += 1
            default: return
            }
        }
    }

    mutating func parseValue() throws(JSONParseError) -> JSONValue {
        guard i < bytes.count else { throw fail("unexpected end of text, expected a value") }
        switch bytes[i] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectWord("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectWord("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectWord("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail("unexpected \(describeByte()), expected a value")
        }
    }

    mutating func expectWord(_ word: StaticString) throws(JSONParseError) {
        let n = word.utf8CodeUnitCount
        guard i + n <= bytes.count else { throw fail("unexpected end of text in '\(word)'") }
        let w = word.utf8Start
        for k in 0..<n where bytes[i + k] != w[k] { throw fail("invalid literal, expected '\(word)'") }
        i += n
    }

    mutating func enter() throws(JSONParseError) {
        depth += 1
        if depth > Self.maxDepth { throw fail("nesting deeper than \(Self.maxDepth) levels") }
    }

    mutating func parseObject() throws(JSONParseError) -> JSONValue {
        try enter()
        i += 1
        var object = JSONObject()
        skipSpace()
        if i < bytes.count && bytes[i] == UInt8(ascii: "}") {
            i += 1; depth -= 1; return .object(object)
        }
        while true {
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else {
                throw fail("unexpected \(describeByte()), expected a member name in quotes")
            }
            let key = try parseString()
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else {
                throw fail("unexpected \(describeByte()), expected ':' after a member name")
            }
            i += 1
            skipSpace()
            object[key] = try parseValue()
            if try closes("}", in: "an object") { break }
        }
        depth -= 1
        return .object(object)
    }

    mutating func parseArray() throws(JSONParseError) -> JSONValue {
        try enter()
        i += 1
        var array: [JSONValue] = []
        skipSpace()
        if i < bytes.count && bytes[i] == UInt8(ascii: "]") {
            i += 1; depth -= 1; return .array(array)
        }
        while true {
            skipSpace()
            array.append(try parseValue())
            if try closes("]", in: "an array") { break }
        }
        depth -= 1
        return .array(array)
    }

    /// After a member or an element: `true` at `close`, `false` at a comma (either consumed);
    /// anything else, or the end of the text, is an error in `container` ("an object").
    mutating func closes(_ close: Unicode.Scalar, in container: String) throws(JSONParseError) -> Bool {
        skipSpace()
        guard i < bytes.count else { throw fail("unexpected end of text in \(container)") }
        if bytes[i] == UInt8(ascii: ",") { i += 1; return false }
        if bytes[i] == UInt8(ascii: close) { i += 1; return true }
        throw fail("unexpected \(describeByte()), expected ',' or '\(close)' in \(container)")
    }

    mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = i
        var isInteger = true
        var hasNonzeroDigit = false
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        let mantissaStart = i
        guard i < bytes.count, isDigit(bytes[i]) else { throw fail("invalid number: expected a digit") }
        if bytes[i] == UInt8(ascii: "0") {
            i += 1
            if i < bytes.count && isDigit(bytes[i]) { throw fail("invalid number: leading zero") }
        } else {
            while i < bytes.count && isDigit(bytes[i]) { i += 1 }
        }
        if i < bytes.count && bytes[i] == UInt8(ascii: ".") {
            isInteger = false
            i += 1
            guard i < bytes.count, isDigit(bytes[i]) else { throw fail("invalid number: expected a digit after '.'") }
            while i < bytes.count && isDigit(bytes[i]) { i += 1 }
        }
        for b in UnsafeBufferPointer(rebasing: bytes[mantissaStart..<i]) where b > UInt8(ascii: "0") && b <= UInt8(ascii: "9") {
            hasNonzeroDigit = true
            break
        }
        if i < bytes.count && (bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E")) {
            isInteger = false
            i += 1
            if i < bytes.count && (bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-")) { i += 1 }
            guard i < bytes.count, isDigit(bytes[i]) else { throw fail("invalid number: expected a digit in the exponent") }
            while i < bytes.count && isDigit(bytes[i]) { i += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
        if isInteger {
            if let n = Int64(text) { return .integer(n) }
            return .decimal(JSONDecimal(checked: text))
        }
        // Past Double's range (infinite), or nonzero below its smallest magnitude (zero):
        // keep the text.
        guard let d = Double(text), d.isFinite, d != 0 || !hasNonzeroDigit else {
            return .decimal(JSONDecimal(checked: text))
        }
        return .number(d)
    }

    func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }

    mutating func parseString() throws(JSONParseError) -> String {
        i += 1  // opening quote
        let start = i
        // Fast path: no escapes.
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                let s = try decodeUTF8(start..<i)
                i += 1
                return s
            }
            if b == UInt8(ascii: "\\") { break }
            if b < 0x20 { throw fail("control character in a string (use an escape)") }
            i += 1
        }
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: try decodeUTF8(start..<i).unicodeScalars)
        var runStart = i
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                scalars.append(contentsOf: try decodeUTF8(runStart..<i).unicodeScalars)
                i += 1
                return String(scalars)
            }
            if b < 0x20 { throw fail("control character in a string (use an escape)") }
            if b != UInt8(ascii: "\\") { i += 1; continue }
            scalars.append(contentsOf: try decodeUTF8(runStart..<i).unicodeScalars)
            i += 1
            guard i < bytes.count else { break }
            let e = bytes[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                let unit = try parseHex4()
                if (0xD800...0xDBFF).contains(unit), i + 1 < bytes.count,
                    bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u")
                {
                    i += 2
                    let low = try parseHex4()
                    if (0xDC00...0xDFFF).contains(low) {
                        let v = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                        scalars.append(Unicode.Scalar(v) ?? "\u{FFFD}")
                    } else {
                        // A high surrogate followed by something else: both stand alone.
                        scalars.append("\u{FFFD}")
                        scalars.append(Unicode.Scalar(UInt32(low)) ?? "\u{FFFD}")
                    }
                } else {
                    scalars.append(Unicode.Scalar(UInt32(unit)) ?? "\u{FFFD}")
                }
            default:
                i -= 1
                throw fail("invalid escape '\\\(Character(Unicode.Scalar(e)))' in a string")
            }
            runStart = i
        }
        throw fail("unexpected end of text in a string")
    }

    mutating func parseHex4() throws(JSONParseError) -> UInt16 {
        guard i + 4 <= bytes.count else { throw fail("unexpected end of text in a \\u escape") }
        var v: UInt16 = 0
        for _ in 0..<4 {
            let b = bytes[i]
            let d: UInt8
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = b - UInt8(ascii: "A") + 10
            default: throw fail("invalid hex digit in a \\u escape")
            }
            v = v << 4 | UInt16(d)
            i += 1
        }
        return v
    }

    func decodeUTF8(_ range: Range<Int>) throws(JSONParseError) -> String {
        let slice = UnsafeBufferPointer(rebasing: bytes[range])
        if let s = String(validating: slice, as: UTF8.self) { return s }
        throw JSONParseError(message: "invalid UTF-8 in a string", column: range.lowerBound + 1)
    }
}
