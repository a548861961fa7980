import CLibFuzzer
import FuzzSupport
import DBus

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One input: a method call, as wire bytes (first byte even: the rest demarshalled, the
/// sender chosen by the first byte when the message has none) or built from the bytes (first
/// byte odd, `FuzzBytes`), dispatched by `DispatchTables`. Whatever the call:
/// - the body's size found without decoding is the length its wire form gives;
/// - a body over the limit is never decoded, and never reaches a handler or a reply;
/// - a non-owner never reaches a subscription's handler, property or anything but `Introspect`;
/// - a handler is handed arguments of its signature only, equal to a full decode of the body;
/// - the decision is the one the dispatch rules give, step by step, as far as the header says.
func fuzzDBusDispatch(_ bytes: UnsafeBufferPointer<UInt8>) {
    var input = FuzzBytes(bytes)
    let mode = input.byte()
    let header: DBusCallHeader
    let message: DBusMessage
    if mode & 1 == 0 {
        guard let read = try? DBusMessage.demarshal(input.rest), var readHeader = read.callHeader else { return }
        if readHeader.sender.rawValue.isEmpty { readHeader.sender = FuzzBytes.senders[Int(mode >> 1) % FuzzBytes.senders.count] }
        (header, message) = (readHeader, read)
    } else {
        guard let made = try? input.call() else { return }
        (header, message) = made
    }
    check(header, RecordingBody(message))
}

/// A body that records whether it was decoded.
final class RecordingBody: DBusCallBody {
    let message: DBusMessage
    private(set) var decoded = false

    init(_ message: DBusMessage) {
        self.message = message
    }

    var bodySize: Int { message.bodySize }

    func elementCount(ofArgument index: Int) -> Int? {
        message.elementCount(ofArgument: index)
    }

    func arguments(within budget: DBusDecodingBudget, limitsExceeded: ErrorName) throws(DBusError) -> [DBusValue] {
        decoded = true
        return try message.arguments(within: budget, limitsExceeded: limitsExceeded)
    }
}

func check(_ header: DBusCallHeader, _ body: RecordingBody) {
    let limits = DispatchTables.limits
    let size = body.bodySize
    guard let wire = try? body.message.marshal() else { violated("a call does not marshal") }
    guard size == wireBodyLength(wire) else { violated("body size \(size), wire says \(wireBodyLength(wire))") }

    let tables = DispatchTables()
    let decision = tables.dispatcher.decide(header, body: body)
    let oversized = size > limits.maximumBodySize
    if oversized, body.decoded { violated("a body of \(size) bytes was decoded") }

    switch decision {
    case .invoke(let method, _, let arguments):
        if oversized { violated("a body of \(size) bytes reached \(method.name)") }
        guard arguments.map(\.signature).joined() == method.argumentSignature,
              let full = try? body.message.arguments(), full.count == arguments.count, zip(full, arguments).allSatisfy(sameBits)
        else { violated("\(method.name) is handed \(arguments), not the body's arguments of its signature") }
        var answers = 0
        let call = DBusMethodCall(
            header: header, interface: nil, arguments: arguments, resultSignature: method.resultSignature
        ) { result in
            answers += 1
            if case .failure(let error) = result, error.name == DBusError.Name.failed { violated("\(method.name) failed: \(error)") }
        }
        method.handler(call)
        guard answers == 1 else { violated("\(method.name) answered \(answers) times") }
    case .reply(let values):
        if oversized { violated("a body of \(size) bytes was answered with \(values)") }
    case .error, .notHandled:
        break
    }
    expectRules(header, size: size, decision: decision)
}

/// The dispatch rules, step by step, as far as the header and the body's size decide.
func expectRules(_ header: DBusCallHeader, size: Int, decision: DBusDispatcher.Decision) {
    let outcome: String
    switch decision {
    case .notHandled: outcome = "not handled"
    case .error(let error): outcome = error.name
    case .reply: outcome = "reply"
    case .invoke(let method, _, _): outcome = "invoke \(method.name)"
    }
    func expect(_ expected: String) {
        guard outcome == expected else {
            violated("\(header.sender) → \(header.path) \(header.interface?.rawValue ?? "-").\(header.member) '\(header.signature)' (\(size) bytes): \(outcome), expected \(expected)")
        }
    }
    let limitsExceeded = DispatchTables.limits.limitsExceeded.rawValue
    func sizeThenSignature(_ signature: String, otherwise: () -> Void) {
        if size > DispatchTables.limits.maximumBodySize { return expect(limitsExceeded) }
        if header.signature != signature { return expect(DBusError.Name.invalidArgs) }
        otherwise()
    }
    if header.interface == .peer { return expect("not handled") }
    let target = DispatchTables.target(of: header.path)
    if header.interface == .introspectable || (header.interface == nil && header.member == "Introspect") {
        if target == .nothing { return expect(DBusError.Name.unknownObject) }
        if header.member != "Introspect" { return expect(DBusError.Name.unknownMethod) }
        return sizeThenSignature("") { expect("reply") }
    }
    let members: [String: String]
    switch target {
    case .nothing, .node: return expect(DBusError.Name.unknownObject)
    case .subscription(let owner):
        if owner != header.sender { return expect(DBusError.Name.accessDenied) }
        members = ["Suspend": "", "Resume": "", "Cancel": "", "Resync": ""]
    case .bus:
        members = ["Subscribe": "asa{sv}", "GetValue": "s", "Snapshot": "as"]
    }
    let ownInterface = target == .bus ? DispatchTables.busInterface : DispatchTables.subscriptionInterface
    let properties = ["Get": "ss", "GetAll": "s", "Set": "ssv"]
    let signature: String
    if header.interface == .properties || (header.interface == nil && members[header.member.rawValue] == nil) {
        guard let expected = properties[header.member.rawValue] else { return expect(DBusError.Name.unknownMethod) }
        signature = expected
    } else if let interface = header.interface, interface != ownInterface {
        return expect(DBusError.Name.unknownInterface)
    } else if let expected = members[header.member.rawValue] {
        signature = expected
    } else {
        return expect(DBusError.Name.unknownMethod)
    }
    sizeThenSignature(signature) {
        // Past the header: the precheck, the budget, then the method or the property's answer.
        let allowed = ["invoke \(header.member)", "reply", limitsExceeded, DBusError.Name.unknownInterface,
                       DBusError.Name.unknownProperty, DBusError.Name.propertyReadOnly, DBusError.Name.notSupported]
        guard allowed.contains(outcome) else { return expect(allowed.joined(separator: " or ")) }
    }
}

/// The body length a message's wire form gives (bytes 4 to 7, in its byte order).
func wireBodyLength(_ wire: [UInt8]) -> Int {
    let field = wire[4..<8].map(UInt32.init)
    return Int(wire[0] == UInt8(ascii: "l")
        ? field[0] | field[1] << 8 | field[2] << 16 | field[3] << 24
        : field[3] | field[2] << 8 | field[1] << 16 | field[0] << 24)
}

/// Whether two values are equal, doubles compared by their bits (a NaN read twice is the same).
func sameBits(_ a: DBusValue, _ b: DBusValue) -> Bool {
    func all(_ x: [DBusValue], _ y: [DBusValue]) -> Bool { x.count == y.count && zip(x, y).allSatisfy(sameBits) }
    switch (a, b) {
    case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
    case (.variant(let x), .variant(let y)): return sameBits(x, y)
    case (.structure(let x), .structure(let y)): return all(x, y)
    case (.array(let s, let x), .array(let t, let y)): return s == t && all(x, y)
    case (.dictionary(let k, let v, let x), .dictionary(let l, let w, let y)):
        return k == l && v == w && all(x.map(\.key), y.map(\.key)) && all(x.map(\.value), y.map(\.value))
    default: return a == b
    }
}

#if NOTIFYBUS_LIBFUZZER
/// The input function libFuzzer calls with each input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzDBusDispatch(UnsafeBufferPointer(start: data, count: size))
    return 0
}

/// The executable's entry point (SwiftPM links `main` to `<Module>_main`): libFuzzer's driver,
/// with the command line as libFuzzer reads it.
@_cdecl("FuzzDBusDispatch_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, fuzzOneInput)
}
#else
/// Runs the harness once per file named on the command line.
@main struct FuzzDBusDispatchFiles {
    static func main() { replayFiles("FuzzDBusDispatch", fuzzDBusDispatch) }
}
#endif

/// Reports a broken property of this harness (see `FuzzSupport.violated`).
func violated(_ message: String) -> Never { violated("FuzzDBusDispatch", message) }
