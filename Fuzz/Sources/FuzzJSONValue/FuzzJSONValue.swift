import CLibFuzzer
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

/// Reports a broken property the way libFuzzer records a crash: a message, then SIGABRT.
func violated(_ message: String) -> Never {
    printError("FuzzJSONValue: \(message)")
    abort()
}

/// Writes a line to standard error.
func printError(_ message: String) {
    let bytes = Array((message + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
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
    static func main() {
        for path in CommandLine.arguments.dropFirst() {
            guard let bytes = readFile(path) else { violated("cannot read \(path)") }
            bytes.withUnsafeBufferPointer(fuzzJSONValue)
            print("\(path): ok")
        }
    }
}

func readFile(_ path: String) -> [UInt8]? {
    guard let file = fopen(path, "rb") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buffer, 1, buffer.count, file)
        if n <= 0 { break }
        bytes += buffer[0..<n]
    }
    return bytes
}
#endif
