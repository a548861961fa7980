import CLibFuzzer
import FuzzSupport
import DBus

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One input: a D-Bus message in its wire form. Whatever the bytes, `DBusMessage.demarshal`
/// returns a message or throws; a message's header fields all read, and its arguments decode
/// (or, only when the signature holds a Unix file descriptor or a variant that may, throw
/// `NotSupported`) into values whose signatures spell the message's signature, that would pass
/// `validate()` to be sent again, and that read back the same (doubles bit for bit) from the
/// message marshalled again.
func fuzzDBusMessage(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard let message = try? DBusMessage.demarshal(bytes) else { return }
    let header = readHeader(message)
    let first = message.firstStringArgument
    if message.kind == .error { _ = message.error().description }
    let arguments: [DBusValue]
    do {
        arguments = try message.arguments()
    } catch {
        // A descriptor: in the signature, or in a variant's.
        guard error.name == DBusError.Name.notSupported, header.signature.contains(where: { "hv".contains($0) }) else {
            violated("arguments of '\(header.signature)' failed: \(error)")
        }
        return
    }
    let spelled = arguments.map(\.signature).joined()
    guard spelled == header.signature else { violated("signature '\(header.signature)' read as '\(spelled)'") }
    for value in arguments {
        do {
            try value.validate()
        } catch {
            violated("a value read does not validate: \(error): \(value)")
        }
        _ = value.description
        _ = value.stringKeyedDictionary
        _ = value.doubleValue
    }
    switch arguments.first {
    case .string(let s), .objectPath(let s), .signature(let s):
        guard first == s else { violated("first string argument \(String(describing: first)) is not '\(s)'") }
    default:
        guard first == nil else { violated("first string argument \(String(describing: first)) of '\(header.signature)'") }
    }
    guard let blob = try? message.marshal() else { violated("a message read does not marshal") }
    guard let again = try? DBusMessage.demarshal(blob) else { violated("a message marshalled does not demarshal") }
    guard readHeader(again) == header else { violated("the header changed in a round trip") }
    guard let readAgain = try? again.arguments(), readAgain.count == arguments.count,
        zip(readAgain, arguments).allSatisfy(sameBits)
    else { violated("the arguments changed in a round trip") }
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

/// The header fields of a message, each read once.
struct Header: Equatable {
    var kind: DBusMessage.Kind
    var serial: UInt32
    var fields: [String?]
    var signature: String
}

func readHeader(_ message: DBusMessage) -> Header {
    Header(
        kind: message.kind, serial: message.serial,
        fields: [message.sender, message.destination, message.path, message.interface, message.member, message.errorName],
        signature: message.signature)
}

#if NOTIFYBUS_LIBFUZZER
/// The input function libFuzzer calls with each input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzDBusMessage(UnsafeBufferPointer(start: data, count: size))
    return 0
}

/// The executable's entry point (SwiftPM links `main` to `<Module>_main`): libFuzzer's driver,
/// with the command line as libFuzzer reads it.
@_cdecl("FuzzDBusMessage_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, fuzzOneInput)
}
#else
/// Runs the harness once per file named on the command line.
@main struct FuzzDBusMessageFiles {
    static func main() { replayFiles("FuzzDBusMessage", fuzzDBusMessage) }
}
#endif

/// Reports a broken property of this harness (see `FuzzSupport.violated`).
func violated(_ message: String) -> Never { violated("FuzzDBusMessage", message) }
