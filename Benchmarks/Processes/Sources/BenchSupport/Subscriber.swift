import Harness
#if canImport(Glibc)
import Glibc
#endif

/// `… subscriber` (a mode of DaemonBench and LifecycleBench): a child process, first moved into
/// the group `--cgroup DIR` when one is given, holding one or more connections of one kind, each
/// receiving the changes of `settings/<namespace>/*`:
/// - `raw`: a match rule on the portal's `SettingChanged` with `arg0='<namespace>'` (the anchor);
/// - `daemon`: `Subscribe(["settings/<namespace>/**"], {})` on notifybusd, then its `Events`;
/// - `unicast`: nothing asked of anyone: it reads the `Events` a `SignalSender` sends to its
///   connections (their unique names follow `ready` on its first line).
///
/// Both are the same raw libdbus loop (`poll`, read, pop, decode), so the differences between
/// them are the paths their messages took. It prints `ready` once subscribed, then what
/// `--report` asks for on standard output:
/// - `done`: after the command `expect T` on standard input, one line `done <ns> <messages>
///   <notifications>` as soon as every key `k0`…`k<keys-1>` holds a value ≥ T, counting the
///   messages and notifications received since the command;
/// - `each`: `<value> <ns>` for every value received (the values are send times);
/// - `fanout`: `<value> <ns>` once every connection has received `value`, `ns` the last one's time;
/// - `none`: nothing (it holds its subscriptions, `--suspend`ed or not, and drains its messages).
/// The times are CLOCK_MONOTONIC, taken once the message is decoded. End of input ends it.
public final class Subscriber {
    /// What its connections receive: the portal's signals by a match rule, notifybusd's `Events`
    /// of a subscription, or `Events` a sender sends them unasked.
    public enum Kind: String, Sendable { case raw, daemon, unicast }
    /// What it prints.
    public enum Report: String, Sendable { case done, each, fanout, none }

    private let kind: Kind
    private let report: Report
    private let namespace: String
    private let keys: [String]
    private let connections: [RawConnection]
    private var values: [String: Int64] = [:]
    private var threshold: Int64?
    private var messages = 0
    private var notifications = 0
    private var pending: [Int64: (count: Int, last: Int64)] = [:]
    private var input: [UInt8] = []

    /// The subscriber its options describe, connected and subscribed.
    public init(arguments: Arguments) throws {
        kind = try arguments.choice("kind", default: .raw)
        report = try arguments.choice("report", default: .none)
        namespace = arguments.string("namespace", default: "bench")
        keys = (0..<arguments.integer("keys", default: 10)).map { "k\($0)" }
        if let group = arguments.optional("cgroup") { try Cgroup2.move(into: group) }
        let address = arguments.string("address", default: "")
        var connections: [RawConnection] = []
        for _ in 0..<arguments.integer("connections", default: 1) {
            let connection = try RawConnection(address: address)
            switch kind {
            case .raw:
                try connection.addMatch(
                    "type='signal',sender='\(BenchPortal.name)',interface='\(BenchPortal.interface)',"
                        + "member='SettingChanged',arg0='\(namespace)'")
            case .daemon:
                for _ in 0..<arguments.integer("subscriptions", default: 1) {
                    let reply = try connection.call(
                        destination: BenchBed.daemonName, path: BenchBed.daemonPath, interface: BenchBed.daemonName,
                        member: "Subscribe", [.strings(["settings/\(namespace)/**"]), .vardict([])])
                    guard let path = reply.first?.stringValue else { throw HarnessError("Subscribe returned no path") }
                    if arguments.flag("suspend") {
                        _ = try connection.call(
                            destination: BenchBed.daemonName, path: path, interface: "org.notifybus.Subscription1",
                            member: "Suspend")
                    }
                }
            case .unicast:
                break
            }
            connections.append(connection)
        }
        self.connections = connections
    }

    /// Serves until its standard input ends.
    public func run() {
        emit(kind == .unicast ? "ready " + connections.map(\.uniqueName).joined(separator: " ") : "ready")
        var descriptors = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0)]
            + connections.map { pollfd(fd: $0.fileDescriptor, events: Int16(POLLIN), revents: 0) }
        while true {
            for (index, connection) in connections.enumerated() {
                while let message = connection.pop() { handle(message, on: index) }
            }
            guard poll(&descriptors, nfds_t(descriptors.count), -1) > 0 else { continue }
            if descriptors[0].revents != 0, !readCommands() { return }
            for index in connections.indices where descriptors[index + 1].revents != 0 {
                guard connections[index].readAvailable() else { return }
            }
        }
    }

    private func handle(_ message: Message, on connection: Int) {
        switch kind {
        case .raw:
            guard message.isSignal(interface: BenchPortal.interface, member: "SettingChanged") else { return }
            let arguments = message.arguments
            guard arguments.count == 3, let key = arguments[1].stringValue, let value = arguments[2].int64Value else { return }
            messages += 1
            received(key: key, value: value, on: connection, at: monotonicNanoseconds())
        case .daemon, .unicast:
            guard message.isSignal(interface: "org.notifybus.Subscription1", member: "Events") else { return }
            messages += 1
            let prefix = "settings/\(namespace)/"
            var changes: [(String, Int64)] = []
            for element in message.arguments.first?.elements ?? [] {
                let fields = element.stringKeyed
                guard fields["type"]?.stringValue == "notification", let key = fields["key"]?.stringValue,
                      key.hasPrefix(prefix), let text = fields["value"]?.stringValue, let value = Int64(text)
                else { continue }
                changes.append((String(key.dropFirst(prefix.count)), value))
            }
            let now = monotonicNanoseconds()
            for (key, value) in changes { received(key: key, value: value, on: connection, at: now) }
        }
        if let threshold, keys.allSatisfy({ (values[$0] ?? .min) >= threshold }) {
            emit("done \(monotonicNanoseconds()) \(messages) \(notifications)")
            self.threshold = nil
        }
    }

    private func received(key: String, value: Int64, on connection: Int, at time: Int64) {
        notifications += 1
        values[key] = value
        switch report {
        case .each:
            emit("\(value) \(time)")
        case .fanout:
            var entry = pending[value] ?? (0, 0)
            entry = (entry.count + 1, max(entry.last, time))
            if entry.count == connections.count {
                pending[value] = nil
                emit("\(value) \(entry.last)")
            } else {
                pending[value] = entry
            }
        case .done, .none:
            break
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
