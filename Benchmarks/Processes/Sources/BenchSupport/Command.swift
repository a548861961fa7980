import Harness

#if canImport(Glibc)
import Glibc
#endif

/// The path of this executable (`/proc/self/exe`), to start its own modes as children.
public func ownExecutable() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard count > 0 else { return CommandLine.arguments[0] }
    return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Runs a benchmark executable's command line, `PROGRAM MODE --option value…`: `body` gets the mode
/// word and its options. SIGPIPE is ignored (a child that died fails a write instead); an error is
/// printed as `PROGRAM: error` on standard error, and the process exits with status 1.
public func runModes(_ program: String, usage: String, _ body: (String, Arguments) async throws -> Void) async {
    do {
        let words = CommandLine.arguments
        guard words.count >= 2 else { throw HarnessError(usage) }
        signal(SIGPIPE, SIG_IGN)
        try await body(words[1], try Arguments(words.dropFirst(2)))
    } catch {
        let bytes = Array("\(program): \(error)\n".utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        exit(1)
    }
}

/// A line on standard error: what a run is doing (`PROGRAM: text`).
public func progress(_ program: String, _ text: String) {
    let bytes = Array("\(program): \(text)\n".utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}
