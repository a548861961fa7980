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
    usage: DaemonBench frozen|latency|fanout|attacks|idle --notifybusd PATH [options]
           DaemonBench subscriber --address ADDR --kind raw|daemon|unicast [options]   (started by the others)
           DaemonBench sender --address ADDR --destinations NAME,… [options]           (started by fanout)
           DaemonBench attacker --address ADDR --kind KIND [options]                   (started by attacks)
           DaemonBench probe --address ADDR [--interval MS] [--destination NAME]      (started by attacks)
           DaemonBench plain --address ADDR [--name NAME]                              (started by attacks)
    """

do {
    let words = CommandLine.arguments
    guard words.count >= 2 else { throw BenchError(usage) }
    let arguments = try Arguments(words.dropFirst(2))
    signal(SIGPIPE, SIG_IGN)
    switch words[1] {
    case "subscriber": try Subscriber(arguments: arguments).run()
    case "frozen": try FrozenBenchmark(arguments: arguments, executable: ownExecutable()).run()
    case "latency": try LatencyBenchmark(arguments: arguments, executable: ownExecutable()).run()
    case "sender": try SignalSender(arguments: arguments).run()
    case "attacker": try Attacker(arguments: arguments).run()
    case "probe": try VersionProbe(arguments: arguments).run()
    case "plain": try PlainService(arguments: arguments).run()
    case "fanout": try FanOutBenchmark(arguments: arguments, executable: ownExecutable()).run()
    case "attacks": try AttackBenchmark(arguments: arguments, executable: ownExecutable()).run()
    case "idle": try IdleBenchmark(arguments: arguments, executable: ownExecutable()).run()
    default: throw BenchError(usage)
    }
} catch {
    let bytes = Array("DaemonBench: \(error)\n".utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(1)
}
