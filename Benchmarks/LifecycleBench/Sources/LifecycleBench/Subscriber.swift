import BenchDBus
#if canImport(Glibc)
import Glibc
#endif

/// `LifecycleBench subscriber`: an app's subscriber, a child process that first moves itself
/// into the app's scope (`--cgroup DIR`), then holds one `Subscribe(["settings/<namespace>/**"])`
/// on notifybusd (which follows its freezer: it holds and collapses while the scope is frozen)
/// and reads its `Events` with a raw libdbus loop (`poll`, read, pop, decode). It prints `ready`
/// once subscribed, then what `--report` asks for on standard output:
/// - `done`: after the command `expect T` on standard input, one line `done <ns> <messages>
///   <notifications>` as soon as every key `k0`…`k<keys-1>` holds a value ≥ T, counting the
///   `Events` messages and notifications received since the command;
/// - `none`: nothing (it drains its messages).
/// The times are CLOCK_MONOTONIC, taken once the message is decoded. End of input ends it.
final class Subscriber {
    enum Report: String { case done, none }

    private let report: Report
    private let namespace: String
    private let keys: [String]
    private let connection: RawConnection
    private var values: [String: Int64] = [:]
    private var threshold: Int64?
    private var messages = 0
    private var notifications = 0
    private var input: [UInt8] = []

    init(arguments: Arguments) throws(BenchError) {
        report = try arguments.choice("report", default: .none)
        namespace = arguments.string("namespace", default: "bench")
        keys = (0..<arguments.integer("keys", default: 10)).map { "k\($0)" }
        if let group = arguments.optional("cgroup") { try Cgroup.join(group) }
        connection = try RawConnection(address: arguments.string("address", default: ""))
        let reply = try connection.call(
            destination: Bus.daemonName, path: Bus.daemonPath, interface: Bus.daemonName,
            member: "Subscribe", [.strings(["settings/\(namespace)/**"]), .vardict([])])
        guard reply.first?.stringValue != nil else { throw BenchError("Subscribe returned no path") }
    }

    /// Serves until its standard input ends.
    func run() {
        emit("ready")
        var descriptors = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: connection.fileDescriptor, events: Int16(POLLIN), revents: 0)]
        while true {
            while let message = connection.pop() { handle(message) }
            guard poll(&descriptors, nfds_t(descriptors.count), -1) > 0 else { continue }
            if descriptors[0].revents != 0, !readCommands() { return }
            if descriptors[1].revents != 0, !connection.readAvailable() { return }
        }
    }

    private func handle(_ message: Message) {
        guard message.isSignal(interface: "org.notifybus.Subscription1", member: "Events") else { return }
        messages += 1
        let prefix = "settings/\(namespace)/"
        for element in message.arguments.first?.elements ?? [] {
            let fields = element.stringKeyed
            guard fields["type"]?.stringValue == "notification", let key = fields["key"]?.stringValue,
                  key.hasPrefix(prefix), let text = fields["value"]?.stringValue, let value = Int64(text)
            else { continue }
            notifications += 1
            values[String(key.dropFirst(prefix.count))] = value
        }
        if report == .done, let threshold, keys.allSatisfy({ (values[$0] ?? .min) >= threshold }) {
            emit("done \(monotonicNanoseconds()) \(messages) \(notifications)")
            self.threshold = nil
        }
    }

    /// Reads and obeys the commands on standard input; `false` at its end.
    private func readCommands() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 1024)
        let count = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
        guard count > 0 else { return count < 0 && errno == EINTR }
        input.append(contentsOf: chunk[..<count])
        while let newline = input.firstIndex(of: UInt8(ascii: "\n")) {
            let words = String(decoding: input[..<newline], as: UTF8.self).split(separator: " ")
            input.removeSubrange(...newline)
            if words.count == 2, words[0] == "expect", let value = Int64(words[1]) {
                threshold = value
                messages = 0
                notifications = 0
            }
        }
        return true
    }

    private func emit(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
    }
}
