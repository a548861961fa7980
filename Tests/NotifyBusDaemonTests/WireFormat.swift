import DBus

/// D-Bus messages written and read byte by byte (little-endian), for attackers that must send
/// what a well-behaved library would not (any header, any signature, a 30 MB body built without
/// decoding it first) and for receivers that must see each message's marshalled size.
///
/// Alignment follows the specification: every value is aligned to its type's boundary counted
/// from the start of the message; a body starts 8-aligned, so counting from the body's start is
/// the same.
enum Wire {
    enum MessageType: UInt8 {
        case methodCall = 1, methodReturn = 2, error = 3, signal = 4
    }

    /// `NO_REPLY_EXPECTED`.
    static let noReplyExpected: UInt8 = 0x1

    /// Appends `value` to `bytes` (little-endian).
    static func append(_ value: DBusValue, to bytes: inout [UInt8]) {
        switch value {
        case .byte(let v): bytes.append(v)
        case .boolean(let v): appendInteger(UInt32(v ? 1 : 0), to: &bytes)
        case .int16(let v): appendInteger(v, to: &bytes)
        case .uint16(let v): appendInteger(v, to: &bytes)
        case .int32(let v): appendInteger(v, to: &bytes)
        case .uint32(let v): appendInteger(v, to: &bytes)
        case .int64(let v): appendInteger(v, to: &bytes)
        case .uint64(let v): appendInteger(v, to: &bytes)
        case .double(let v): appendInteger(v.bitPattern, to: &bytes)
        case .string(let s), .objectPath(let s): appendString(s, to: &bytes)
        case .signature(let s): appendSignature(s, to: &bytes)
        case .variant(let inner):
            appendSignature(inner.signature, to: &bytes)
            append(inner, to: &bytes)
        case .structure(let fields):
            pad(&bytes, to: 8)
            for field in fields { append(field, to: &bytes) }
        case .array(let element, let values):
            appendArray(elementAlignment: alignment(of: element), to: &bytes) { bytes in
                for value in values { append(value, to: &bytes) }
            }
        case .dictionary(_, _, let entries):
            appendArray(elementAlignment: 8, to: &bytes) { bytes in
                for entry in entries {
                    pad(&bytes, to: 8)
                    append(entry.key, to: &bytes)
                    append(entry.value, to: &bytes)
                }
            }
        }
    }

    /// The body and signature of `values`, as arguments of a message.
    static func body(_ values: [DBusValue]) -> (signature: String, bytes: [UInt8]) {
        var bytes: [UInt8] = []
        for value in values { append(value, to: &bytes) }
        return (values.map(\.signature).joined(), bytes)
    }

    /// An `as` of `count` copies of the one-byte-per-character ASCII string `element`, built
    /// directly (a million elements in milliseconds).
    static func stringArray(repeating element: String, count: Int) -> [UInt8] {
        let text = Array(element.utf8)
        var one: [UInt8] = []
        appendInteger(UInt32(text.count), to: &one)
        one += text
        one.append(0)
        let stride = (one.count + 3) & ~3
        var bytes: [UInt8] = []
        bytes.reserveCapacity(4 + stride * count)
        appendInteger(UInt32(stride * (count - 1) + one.count), to: &bytes)
        for index in 0..<count {
            bytes += one
            if index < count - 1 { pad(&bytes, to: 4) }
        }
        return bytes
    }

    /// An `ay` of `count` zero bytes.
    static func byteArray(count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(4 + count)
        appendInteger(UInt32(count), to: &bytes)
        bytes += repeatElement(0, count: count)
        return bytes
    }

    /// A whole message: the header with `fields` (code, value), padding, then `body`.
    static func message(
        type: MessageType, flags: UInt8 = 0, serial: UInt32, fields: [(UInt8, DBusValue)], body: [UInt8]
    ) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: "l"), type.rawValue, flags, 1]
        appendInteger(UInt32(body.count), to: &bytes)
        appendInteger(serial, to: &bytes)
        append(.array(elementSignature: "(yv)", fields.map { .structure([.byte($0.0), .variant($0.1)]) }), to: &bytes)
        pad(&bytes, to: 8)
        bytes += body
        return bytes
    }

    /// A method call; `interface` `nil` leaves the header field out.
    static func methodCall(
        serial: UInt32, destination: String?, path: String, interface: String?, member: String,
        signature: String, body: [UInt8], flags: UInt8 = 0
    ) -> [UInt8] {
        var fields: [(UInt8, DBusValue)] = [(1, .objectPath(path))]
        if let interface { fields.append((2, .string(interface))) }
        fields.append((3, .string(member)))
        if let destination { fields.append((6, .string(destination))) }
        if !signature.isEmpty { fields.append((8, .signature(signature))) }
        return message(type: .methodCall, flags: flags, serial: serial, fields: fields, body: body)
    }

    /// The total length of the message at the start of `bytes` (from its fixed header), or `nil`
    /// while fewer than 16 bytes are there.
    static func messageLength(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard bytes.count >= 16 else { return nil }
        let big = bytes[bytes.startIndex] == UInt8(ascii: "B")
        let bodyLength = Int(readUInt32(bytes, at: bytes.startIndex + 4, bigEndian: big))
        let fieldsLength = Int(readUInt32(bytes, at: bytes.startIndex + 12, bigEndian: big))
        return ((16 + fieldsLength + 7) & ~7) + bodyLength
    }

    static func readUInt32(_ bytes: ArraySlice<UInt8>, at index: Int, bigEndian: Bool) -> UInt32 {
        let b = (0..<4).map { UInt32(bytes[index + $0]) }
        return bigEndian ? b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3] : b[3] << 24 | b[2] << 16 | b[1] << 8 | b[0]
    }

    // MARK: Pieces

    static func alignment(of signature: String) -> Int {
        switch signature.first {
        case "n", "q": 2
        case "b", "i", "u", "s", "o", "a": 4
        case "x", "t", "d", "(", "{": 8
        default: 1
        }
    }

    static func pad(_ bytes: inout [UInt8], to boundary: Int) {
        while bytes.count % boundary != 0 { bytes.append(0) }
    }

    static func appendInteger<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        pad(&bytes, to: MemoryLayout<T>.size)
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }

    static func appendString(_ text: String, to bytes: inout [UInt8]) {
        appendInteger(UInt32(text.utf8.count), to: &bytes)
        bytes += text.utf8
        bytes.append(0)
    }

    static func appendSignature(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(text.utf8.count))
        bytes += text.utf8
        bytes.append(0)
    }

    /// An array: its length, the padding to its elements' boundary (counted in no length), the elements.
    static func appendArray(elementAlignment: Int, to bytes: inout [UInt8], _ elements: (inout [UInt8]) -> Void) {
        pad(&bytes, to: 4)
        let lengthAt = bytes.count
        bytes += [0, 0, 0, 0]
        pad(&bytes, to: elementAlignment)
        let start = bytes.count
        elements(&bytes)
        let length = UInt32(bytes.count - start)
        withUnsafeBytes(of: length.littleEndian) { raw in
            for offset in 0..<4 { bytes[lengthAt + offset] = raw[offset] }
        }
    }
}

/// One message as received: its bytes exactly as they came off the socket, and its header.
struct WireMessage: Sendable {
    /// The whole message; `bytes.count` is its marshalled size.
    let bytes: [UInt8]
    let type: Wire.MessageType?
    let serial: UInt32
    let replySerial: UInt32?
    let path: String?
    let interface: String?
    let member: String?
    let errorName: String?
    let sender: String?
    let signature: String
    /// When it was split off the received bytes.
    let received: ContinuousClock.Instant

    init(bytes: [UInt8], received: ContinuousClock.Instant) {
        self.bytes = bytes
        self.received = received
        let slice = bytes[...]
        let big = bytes[0] == UInt8(ascii: "B")
        type = Wire.MessageType(rawValue: bytes[1])
        serial = Wire.readUInt32(slice, at: 8, bigEndian: big)
        var fields: [UInt8: Any] = [:]
        let end = 16 + Int(Wire.readUInt32(slice, at: 12, bigEndian: big))
        var index = 16
        while index < end {
            index = (index + 7) & ~7
            let code = bytes[index]
            let signatureLength = Int(bytes[index + 1])
            let kind = bytes[index + 2]
            index += 3 + signatureLength
            switch kind {
            case UInt8(ascii: "u"):
                index = (index + 3) & ~3
                fields[code] = Wire.readUInt32(slice, at: index, bigEndian: big)
                index += 4
            case UInt8(ascii: "g"):
                let length = Int(bytes[index])
                fields[code] = String(decoding: bytes[(index + 1)..<(index + 1 + length)], as: UTF8.self)
                index += length + 2
            default:  // s, o
                index = (index + 3) & ~3
                let length = Int(Wire.readUInt32(slice, at: index, bigEndian: big))
                fields[code] = String(decoding: bytes[(index + 4)..<(index + 4 + length)], as: UTF8.self)
                index += length + 5
            }
        }
        path = fields[1] as? String
        interface = fields[2] as? String
        member = fields[3] as? String
        errorName = fields[4] as? String
        replySerial = fields[5] as? UInt32
        sender = fields[7] as? String
        signature = fields[8] as? String ?? ""
    }

    /// The arguments, decoded by libdbus (which validates the whole message first).
    func arguments() throws -> [DBusValue] {
        try DBusMessage.demarshal(bytes).arguments()
    }

    /// The first argument when it is a string or object path, read straight from the body.
    var firstString: String? {
        guard signature.first == "s" || signature.first == "o" else { return nil }
        let slice = bytes[...]
        let big = bytes[0] == UInt8(ascii: "B")
        let bodyStart = (16 + Int(Wire.readUInt32(slice, at: 12, bigEndian: big)) + 7) & ~7
        let length = Int(Wire.readUInt32(slice, at: bodyStart, bigEndian: big))
        return String(decoding: bytes[(bodyStart + 4)..<(bodyStart + 4 + length)], as: UTF8.self)
    }

    /// Whether this is an `Events` signal of a subscription.
    var isEvents: Bool { type == .signal && member == "Events" && interface == "org.notifybus.Subscription1" }

    /// For an `Events` signal: its elements, each a dictionary with the variants unwrapped.
    func elements() throws -> [[String: DBusValue]] {
        guard let first = try arguments().first else { return [] }
        return (first.arrayElements ?? []).map { element in
            (element.stringKeyedDictionary ?? [:]).mapValues(\.unwrapped)
        }
    }
}
