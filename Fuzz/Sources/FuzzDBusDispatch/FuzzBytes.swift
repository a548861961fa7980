import DBus

/// An input read as choices: a method call built from its bytes (sender, path, interface,
/// member, and arguments either of the member's own signature or of any), reading zeros once
/// the bytes run out.
struct FuzzBytes {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// The bytes not read yet.
    var rest: UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: bytes[min(index, bytes.count)...])
    }

    mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func pick<T>(_ choices: [T]) -> T {
        choices[Int(byte()) % choices.count]
    }

    static let senders: [BusName] = [":1.7", ":1.8", ":1.9", ":1.70"]
    static let paths: [ObjectPath] = [
        "/org/notifybus/Bus1", "/org/notifybus/Bus1/subscription/1", "/org/notifybus/Bus1/subscription/2",
        "/org/notifybus/Bus1/subscription/3", "/org/notifybus/Bus1/subscription/01", "/org/notifybus/Bus1/subscription",
        "/org/notifybus/Bus1/subscription/1/deeper", "/", "/org", "/org/notifybus", "/org/notifybus/Bus2", "/a/b_c",
    ]
    static let interfaces: [InterfaceName?] = [
        nil, "org.notifybus.Bus1", "org.notifybus.Subscription1", .properties, .introspectable, .peer, "org.example.Nope",
    ]
    static let members: [MemberName] = [
        "Subscribe", "GetValue", "Snapshot", "Suspend", "Resume", "Cancel", "Resync", "Get", "GetAll", "Set",
        "Introspect", "Ping", "Nope",
    ]

    /// A call of one of the members above, with arguments of its own signature or of any.
    mutating func call() throws(DBusError) -> (header: DBusCallHeader, message: DBusMessage) {
        let flags = byte()
        let sender = pick(Self.senders)
        let path = pick(Self.paths)
        let interface = pick(Self.interfaces)
        let member = pick(Self.members)
        let arguments = flags & 4 == 0 ? ownArguments(of: member) : values(count: Int(byte() % 4))
        let message = try DBusMessage.methodCall(
            destination: nil, path: path, interface: interface, member: member, arguments: arguments,
            expectsNoReply: flags & 2 != 0)
        guard var header = message.callHeader else { throw DBusError(name: DBusError.Name.invalidArgs, message: "not a call") }
        header.sender = sender
        return (header, message)
    }

    /// Arguments of the member's signature, of any size.
    private mutating func ownArguments(of member: MemberName) -> [DBusValue] {
        switch member.rawValue {
        case "Subscribe": [.strings(strings()), .vardict((0..<Int(byte() % 4)).map { _ in (text(), value(depth: 2)) })]
        case "GetValue": [.string(text())]
        case "Snapshot": [.strings(strings())]
        case "Get": [.string(interfaceName()), .string(pick(["Version", "Sources", "State", "Nope"]))]
        case "GetAll": [.string(interfaceName())]
        case "Set": [.string(interfaceName()), .string(pick(["Version", "State", "Nope"])), .variant(value(depth: 2))]
        default: []
        }
    }

    private mutating func interfaceName() -> String {
        pick(Self.interfaces).map(\.rawValue) ?? text()
    }

    /// Up to 100 strings (past the 64 patterns a subscription takes), now and then up to 255.
    private mutating func strings() -> [String] {
        let count = byte() == 255 ? Int(byte()) : Int(byte() % 100)
        return (0..<count).map { _ in text() }
    }

    /// Text of up to 63 bytes, valid UTF-8, without NUL; now and then 3,000 bytes.
    private mutating func text() -> String {
        let length = byte()
        if length == 255 { return String(repeating: "x", count: 3000) }
        return String((0..<Int(length % 64)).map { _ in
            let code = byte()
            return code == 0xff ? "é" : Character(Unicode.Scalar(0x20 + code % 0x5f))
        })
    }

    private mutating func values(count: Int) -> [DBusValue] {
        (0..<count).map { _ in value(depth: 4) }
    }

    /// A value of any type, nested at most `depth` levels; an `ay` of up to 8,160 bytes now
    /// and then (past the 4 KiB body limit).
    mutating func value(depth: Int) -> DBusValue {
        let code = byte() % (depth > 0 ? 18 : 12)
        switch code {
        case 0: return .byte(byte())
        case 1: return .boolean(byte() & 1 == 1)
        case 2: return .int16(Int16(bitPattern: UInt16(byte()) << 8 | UInt16(byte())))
        case 3: return .uint32(UInt32(byte()) << 24 | UInt32(byte()))
        case 4: return .int64(Int64(byte()) - 128)
        case 5: return .double(Double(byte()) / 7)
        case 6, 7: return .string(text())
        case 8: return .objectPath(pick(Self.paths).rawValue)
        case 9: return .signature(pick(["", "s", "a{sv}", "(ii)", "aay"]))
        case 10: return .uint64(UInt64(byte()))
        case 11:
            return .array(elementSignature: "y", [DBusValue](repeating: .byte(1), count: Int(byte()) * 32))
        case 12: return .strings(strings())
        case 13: return .structure((0...Int(byte() % 3)).map { _ in value(depth: depth - 1) })
        case 14: return .variant(value(depth: depth - 1))
        case 15: return .vardict((0..<Int(byte() % 5)).map { _ in (text(), value(depth: depth - 1)) })
        case 16: return .array(elementSignature: "u", (0..<Int(byte())).map { .uint32(UInt32($0)) })
        default: return .array(elementSignature: "v", (0..<Int(byte() % 8)).map { _ in .variant(value(depth: depth - 1)) })
        }
    }
}
