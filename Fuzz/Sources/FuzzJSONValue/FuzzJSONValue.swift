import CLibFuzzer
import FuzzSupport
import NotifyBus

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One input: JSON text. Whatever the bytes, parsing returns a value or a `JSONParseError`;
/// a value prints as JSON text that parses back to an equal value with the same hash and
/// prints the same again.
func fuzzJSONValue(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard let value = try? JSONValue(parsing: bytes) else { return }
    let text = value.jsonText
    guard let again = try? JSONValue(parsing: text) else { violated("printed text does not parse: \(text)") }
    guard again == value, again.hashValue == value.hashValue else { violated("round trip changed the value: \(text)") }
    guard again.jsonText == text else { violated("printing is not stable: \(text) then \(again.jsonText)") }
}

#if NOTIFYBUS_LIBFUZZER
/// The input function libFuzzer calls with each input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzJSONValue(UnsafeBufferPointer(start: data, count: size))
    return 0
}

/// The executable's entry point (SwiftPM links `main` to `<Module>_main`): libFuzzer's driver,
/// with the command line as libFuzzer reads it.
@_cdecl("FuzzJSONValue_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, fuzzOneInput)
}
#else
/// Runs the harness once per file named on the command line.
@main struct FuzzJSONValueFiles {
    static func main() { replayFiles("FuzzJSONValue", fuzzJSONValue) }
}
#endif

/// Reports a broken property of this harness (see `FuzzSupport.violated`).
func violated(_ message: String) -> Never { violated("FuzzJSONValue", message) }
