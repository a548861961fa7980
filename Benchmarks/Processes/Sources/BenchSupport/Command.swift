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

/// Runs a benchmark executable's command line, `PROGRAM MODE --option value…`, on this thread: `body`
/// gets the mode word and its options. SIGPIPE is ignored (a child that died fails a write instead),
/// the run's start noted for its reports (`ReportPart.runBegins()`); an error is printed as
/// `PROGRAM: error` on standard error, and the process exits with status 1. (A mode that blocks
/// runs here rather than on a thread of Swift's cooperative pool, and a trace of the process sees
/// its system calls under the program's name.)
public func runModes(_ program: String, usage: String, _ body: (String, Arguments) throws -> Void) {
    do {
        let (mode, arguments) = try modeAndArguments(usage: usage)
        try body(mode, arguments)
    } catch {
        fail(program, error)
    }
}

/// `runModes(_:usage:_:)` for modes that await.
public func runAsyncModes(_ program: String, usage: String, _ body: (String, Arguments) async throws -> Void) async {
    do {
        let (mode, arguments) = try modeAndArguments(usage: usage)
        try await body(mode, arguments)
    } catch {
        fail(program, error)
    }
}

private func modeAndArguments(usage: String) throws -> (String, Arguments) {
    let words = CommandLine.arguments
    guard words.count >= 2 else { throw HarnessError(usage) }
    signal(SIGPIPE, SIG_IGN)
    ReportPart.runBegins()
    return (words[1], try Arguments(words.dropFirst(2)))
}

private func fail(_ program: String, _ error: any Error) -> Never {
    let bytes = Array("\(program): \(error)\n".utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(1)
}

/// A line on standard error: what a run is doing (`PROGRAM: text`).
public func progress(_ program: String, _ text: String) {
    let bytes = Array("\(program): \(text)\n".utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}
