import Harness

#if canImport(Glibc)
import Glibc
#endif

let usage = "usage: MQTTBench [outage|latency|hosts|fleet|idle]...   (default: all five)"
signal(SIGPIPE, SIG_IGN)
ReportPart.runBegins()
let chosen = CommandLine.arguments.dropFirst().isEmpty ? ["outage", "latency", "hosts", "fleet", "idle"] : Array(CommandLine.arguments.dropFirst())
do {
    for name in chosen {
        switch name {
        case "outage": try await outage()
        case "latency": try await latency()
        case "hosts": try await hosts()
        case "fleet": try await fleet()
        case "idle": try await idle()
        default: throw HarnessError(usage)
        }
    }
} catch {
    let bytes = Array("MQTTBench: \(error)\n".utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(1)
}
