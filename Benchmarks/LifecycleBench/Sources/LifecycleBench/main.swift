import BenchDBus
#if canImport(Glibc)
import Glibc
#endif

/// The path of this executable, to start its `subscriber` children.
func ownExecutable() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard count > 0 else { return CommandLine.arguments[0] }
    return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

let usage = """
    usage: LifecycleBench run --notifybusd PATH --focus-thaw PATH --work DIR [--tree NAME] [--rounds 50]
                              [--flush-rounds 5] [--wake-rounds 30] [--busy-seconds 60] [--idle-seconds 60]
           LifecycleBench subscriber --address ADDR --cgroup DIR [--namespace NS] [--report done|none]   (started by run)
           LifecycleBench responder --address ADDR --cgroup DIR --name NAME   (started by run)
    """

do {
    let words = CommandLine.arguments
    guard words.count >= 2 else { throw BenchError(usage) }
    let arguments = try Arguments(words.dropFirst(2))
    signal(SIGPIPE, SIG_IGN)
    switch words[1] {
    case "subscriber": try Subscriber(arguments: arguments).run()
    case "responder": try Responder(arguments: arguments).run()
    case "run": try LifecycleRun(arguments: arguments, executable: ownExecutable()).run()
    default: throw BenchError(usage)
    }
} catch {
    let bytes = Array("LifecycleBench: \(error)\n".utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(1)
}
