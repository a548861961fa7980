#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What every harness shares: how a broken property is reported, and how a harness built
/// without libFuzzer replays the inputs named on its command line.

/// Reports a broken property of `harness` the way libFuzzer records a crash: a message, then SIGABRT.
public func violated(_ harness: String, _ message: String) -> Never {
    printError("\(harness): \(message)")
    abort()
}

/// Writes a line to standard error.
public func printError(_ message: String) {
    let bytes = Array((message + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

/// Runs `harness` once on each file named on the command line, saying `ok` for each; exits 1
/// when one cannot be read.
public func replayFiles(_ name: String, _ harness: (UnsafeBufferPointer<UInt8>) -> Void) {
    for path in CommandLine.arguments.dropFirst() {
        guard let bytes = readFile(path) else { violated(name, "cannot read \(path)") }
        bytes.withUnsafeBufferPointer(harness)
        print("\(path): ok")
    }
}

/// The bytes of the file at `path`; `nil` when it cannot be read.
public func readFile(_ path: String) -> [UInt8]? {
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
