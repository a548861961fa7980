import BenchSupport
import Harness
#if canImport(Glibc)
import Glibc
#endif

/// `DaemonBench probe --address A`: another well-behaved client, as the specification's
/// responsiveness names it: on a connection of its own, `Get` of the daemon's `Version` (or,
/// with `--destination NAME`, of the plain service's that anchors it, `DaemonBench plain`) every
/// `--interval` ms (10), each call waiting at most 10 s. On `report` (standard input) it prints
/// the samples since the last report and starts again: `probe <calls> <failed> <p50 ns> <p99 ns>
/// <slowest ns>`, a call that fails or answers another version counting as failed (its time
/// counted as well). End of input ends it.
final class VersionProbe {
    private let connection: RawConnection
    private let interval: Int32
    private let destination: String
    private var samples: [Int64] = []
    private var failed = 0
    private var input: [UInt8] = []

    init(arguments: Arguments) throws {
        connection = try RawConnection(address: arguments.string("address", default: ""))
        interval = Int32(max(1, arguments.integer("interval", default: 10)))
        destination = arguments.string("destination", default: BenchBed.daemonName)
    }

    /// Probes until its standard input ends.
    func run() {
        emit("ready")
        var descriptor = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
        while true {
            let started = monotonicNanoseconds()
            let reply = try? connection.call(
                destination: destination, path: BenchBed.daemonPath, interface: "org.freedesktop.DBus.Properties",
                member: "Get", [.string(BenchBed.daemonName), .string("Version")])
            samples.append(monotonicNanoseconds() - started)
            if case .variant(.uint32(2))? = reply?.first {} else { failed += 1 }
            while connection.pop() != nil {}
            guard poll(&descriptor, 1, interval) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 256)
            let count = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if count == 0 || (count < 0 && errno != EINTR) { return }
            input.append(contentsOf: chunk[..<max(0, count)])
            while let newline = input.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: input[..<newline], as: UTF8.self)
                input.removeSubrange(...newline)
                if line == "report" { report() }
            }
        }
    }

    private func report() {
        emit("probe \(samples.count) \(failed) \(Samples(samples).percentile(0.5)) \(Samples(samples).percentile(0.99)) \(samples.max() ?? 0)")
        samples = []
        failed = 0
    }

    private func emit(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
    }
}
