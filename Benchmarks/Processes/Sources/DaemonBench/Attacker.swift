import BenchSupport
import Harness
#if canImport(Glibc)
import Glibc
#endif

/// `DaemonBench attacker --kind K --address A`: one hostile client (specification: D-Bus interface) in a process
/// of its own, on connections of its own. It prepares (connects, builds its messages once,
/// subscribes where its kind does), prints `ready <largest message in bytes>`, waits for `go` on
/// its standard input and then attacks at full speed (a window of calls always in flight: the
/// next one leaves as soon as an answer comes) until `stop`; then it prints one line:
/// `report <sent> <answered> <Events received> <answers by name, name=count,…>`.
///
/// `--destination NAME` sends its calls to another service than notifybusd (`org.notifybus.Bus1`):
/// the plain libdbus service that anchors `Get Version`'s answer times behind large bodies
/// (`DaemonBench plain`), for the kinds that need no subscription of their own (`snapshot`, `body`,
/// `burst`).
///
/// The kinds (what `AttackBenchmark` names a to h):
/// - `snapshot`: `Snapshot` of 1,000,000 one-letter patterns (an 8 MB body), 2 in flight;
/// - `body`: a 30 MB `ay` (`--bytes`) to `/org/notifybus/Bus1/no/such/object`, 2 in flight;
/// - `patterns`: from a connection that has not subscribed yet, 64 `Subscribe` of 64 patterns of
///   1024 bytes each (`a/a/…/a` and a distinct tail) sent at once, then, 4 pairs in flight, the
///   oldest cancelled and a new one made (so it holds 64);
/// - `pairs`: `Subscribe(["settings/**"])` and, on each reply, `Cancel` of it; 32 in flight;
/// - `mixed`: in turn a valid `Subscribe` (cancelled on its reply), `Subscribe` with a wrong
///   signature (`s`), `Subscribe` of one 200,000-byte pattern (past 128 KiB), `Snapshot` at the
///   limits (64 patterns of 1024 bytes), `Cancel` of a subscription that does not exist; 64 in flight;
/// - `sleeper`: `--subscriptions` subscriptions to `settings/**`, then it never reads its socket;
/// - `stopped`: 4 connections of 64 subscriptions each to `settings/**` (the most one process
///   may hold), which it reads; the benchmark stops it with SIGSTOP;
/// - `burst`: `body`'s 30 MB calls, and behind them, over and over, `--fresh` (4) new connections
///   that each send 64 `Subscribe` of 64 patterns of 1024 bytes at once, closed once all are answered.
final class Attacker {
    enum Kind: String { case snapshot, body, patterns, pairs, mixed, sleeper, stopped, burst }

    /// What an outstanding call was, for what its answer leads to.
    private enum Purpose { case plain, subscribe, cancel }

    private static let bus = BenchBed.daemonName
    private static let busPath = BenchBed.daemonPath
    private static let subscriptionInterface = "org.notifybus.Subscription1"

    private let kind: Kind
    private let address: String
    /// Where its calls go (`--destination`; `snapshot`, `body` and `burst`).
    private let destination: String
    /// How many new connections each burst opens (`burst`).
    private let fresh: Int
    private let connections: [RawConnection]
    private var outstanding: [UInt32: Purpose] = [:]
    /// The subscriptions it holds, oldest first (`patterns`).
    private var held: [String] = []
    private var sent = 0
    private var answered = 0
    private var events = 0
    private var answers: [String: Int] = [:]
    private var turn = 0
    /// How many sets of long patterns were made (`patterns`), to make each set distinct.
    private var made = 0
    /// Whether a `Cancel` goes before the next `Subscribe` (`patterns`, once it made 64).
    private var cancelNext = true
    /// The size of its largest message, in bytes.
    private var largest = 0
    private var input: [UInt8] = []
    /// Lines of standard input not yet acted on.
    private var commands: [String] = []
    /// Messages built once and copied for each send.
    private var prepared: [Message] = []

    init(arguments: Arguments) throws {
        kind = try arguments.choice("kind", default: .mixed)
        address = arguments.string("address", default: "")
        destination = arguments.string("destination", default: Self.bus)
        fresh = max(1, arguments.integer("fresh", default: 4))
        var connections = [try RawConnection(address: address)]
        switch kind {
        case .snapshot:
            prepared = [.call(destination: destination, path: Self.busPath, interface: Self.bus, member: "Snapshot", repeating: "a", count: 1_000_000)]
        case .body, .burst:
            prepared = [.call(
                destination: destination, path: Self.busPath + "/no/such/object", interface: Self.bus, member: "Subscribe",
                zeroBytes: arguments.integer("bytes", default: 30_000_000))]
        case .mixed:
            prepared = [
                Self.call("Subscribe", [.string("settings/**")]),
                Self.call("Subscribe", [.strings([String(repeating: "o", count: 200_000)]), .vardict([])]),
                Self.call("Snapshot", [.strings((0..<64).map { String(repeating: "x/", count: 511) + "\(10 + $0)" })]),
            ]
        case .sleeper:
            for _ in 0..<arguments.integer("subscriptions", default: 1) { _ = try Self.subscribe(["settings/**"], on: connections[0]) }
        case .stopped:
            for _ in 1..<4 { connections.append(try RawConnection(address: address)) }
            for connection in connections {
                for _ in 0..<64 { _ = try Self.subscribe(["settings/**"], on: connection) }
            }
        case .pairs, .patterns:
            break
        }
        self.connections = connections
        largest = kind == .patterns
            ? Self.call("Subscribe", [.strings(Self.longPatterns(0)), .vardict([])]).size
            : prepared.map(\.size).max() ?? 0
    }

    /// Prepares, attacks from `go` until `stop`, reports.
    func run() {
        emit("ready \(largest)")
        guard waitFor("go") else { return }
        switch kind {
        case .snapshot, .body: flood(window: 2)
        case .patterns: flood(window: 64)
        case .pairs: flood(window: 32)
        case .mixed: flood(window: 64)
        case .sleeper: _ = waitFor("stop")
        case .stopped: drain()
        case .burst: burst()
        }
        let names = answers.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
        emit("report \(sent) \(answered) \(events) \(names.isEmpty ? "-" : names)")
    }

    // MARK: The attacks

    /// The next call of its kind and what it is; `nil` when it must wait for answers first.
    private func next() -> (Message, Purpose)? {
        defer { turn += 1 }
        switch kind {
        case .snapshot, .body:
            return (prepared[0].copy(), .plain)
        case .patterns:
            // 64 at once; then a Cancel of the oldest before each new one, 4 pairs in flight at
            // most, so that it never holds more than 64.
            if made >= 64 {
                guard outstanding.count < 8 else { return nil }
                if cancelNext {
                    guard let oldest = held.first else { return nil }
                    held.removeFirst()
                    cancelNext = false
                    return (Self.cancel(oldest), .cancel)
                }
                cancelNext = true
            }
            made += 1
            return (Self.call("Subscribe", [.strings(Self.longPatterns(made)), .vardict([])]), .subscribe)
        case .pairs:
            return (Self.call("Subscribe", [.strings(["settings/**"]), .vardict([])]), .subscribe)
        default:
            switch turn % 5 {
            case 0: return (Self.call("Subscribe", [.strings(["settings/**"]), .vardict([])]), .subscribe)
            case 1, 2, 3: return (prepared[turn % 5 - 1].copy(), .plain)
            default: return (Self.cancel(Self.busPath + "/subscription/999999\(turn)"), .plain)
            }
        }
    }

    /// Keeps `window` calls in flight until `stop`; a subscription made is cancelled at once,
    /// except by `patterns`, which keeps it.
    private func flood(window: Int) {
        let connection = connections[0]
        var descriptors = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: connection.fileDescriptor, events: Int16(POLLIN), revents: 0)]
        while !commands.contains("stop") {
            while outstanding.count < window, let (message, purpose) = next() {
                outstanding[connection.send(message)] = purpose
                sent += 1
            }
            descriptors[1].events = Int16(POLLIN) | (connection.hasMessagesToSend ? Int16(POLLOUT) : 0)
            guard poll(&descriptors, 2, -1) > 0 else { continue }
            if descriptors[0].revents != 0 { readCommands() }
            if descriptors[1].revents != 0, !connection.readAvailable() { return }
            while let message = connection.pop() {
                if message.isSignal(interface: Self.subscriptionInterface, member: "Events") { events += 1 }
                guard let purpose = outstanding.removeValue(forKey: message.replySerial) else { continue }
                answered += 1
                answers[message.errorName ?? "reply", default: 0] += 1
                if purpose == .subscribe, message.errorName == nil, let path = message.arguments.first?.stringValue {
                    if kind == .patterns {
                        held.append(path)
                    } else {
                        outstanding[connection.send(Self.cancel(path))] = .cancel
                        sent += 1
                    }
                }
            }
        }
    }

    /// `body`'s flood, 2 in flight on its connection, and a burst of `fresh` new connections, each
    /// sending 64 `Subscribe` of 64 patterns of 1024 bytes at once; the next burst (new
    /// connections again: the daemon has to identify each one) once every call of the last one
    /// was answered.
    private func burst() {
        let body = connections[0]
        var group: [(connection: RawConnection, waiting: Set<UInt32>)] = []
        while !commands.contains("stop") {
            while outstanding.count < 2 {
                outstanding[body.send(prepared[0].copy())] = .plain
                sent += 1
            }
            if group.allSatisfy({ $0.waiting.isEmpty }) {
                group = []
                for _ in 0..<fresh {
                    guard let connection = try? RawConnection(address: address) else { return }
                    var waiting = Set<UInt32>()
                    for _ in 0..<64 {
                        made += 1
                        waiting.insert(connection.send(.call(
                            destination: destination, path: Self.busPath, interface: Self.bus, member: "Subscribe",
                            [.strings(Self.longPatterns(made)), .vardict([])])))
                    }
                    sent += 64
                    group.append((connection, waiting))
                }
            }
            let all = [body] + group.map(\.connection)
            var descriptors = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0)] + all.map {
                pollfd(fd: $0.fileDescriptor, events: Int16(POLLIN) | ($0.hasMessagesToSend ? Int16(POLLOUT) : 0), revents: 0)
            }
            guard poll(&descriptors, nfds_t(descriptors.count), -1) > 0 else { continue }
            if descriptors[0].revents != 0 { readCommands() }
            for (index, connection) in all.enumerated() where descriptors[index + 1].revents != 0 {
                guard connection.readAvailable() else { return }
                while let message = connection.pop() {
                    let known = index == 0
                        ? outstanding.removeValue(forKey: message.replySerial) != nil
                        : group[index - 1].waiting.remove(message.replySerial) != nil
                    guard known else { continue }
                    answered += 1
                    answers[message.errorName ?? "reply", default: 0] += 1
                }
            }
        }
    }

    /// Reads every connection (the benchmark stops the process) until `stop`.
    private func drain() {
        var descriptors = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0)]
            + connections.map { pollfd(fd: $0.fileDescriptor, events: Int16(POLLIN), revents: 0) }
        while !commands.contains("stop") {
            for connection in connections {
                while let message = connection.pop() {
                    if message.isSignal(interface: Self.subscriptionInterface, member: "Events") { events += 1 }
                }
            }
            guard poll(&descriptors, nfds_t(descriptors.count), -1) > 0 else { continue }
            if descriptors[0].revents != 0 { readCommands() }
            for (index, connection) in connections.enumerated() where descriptors[index + 1].revents != 0 {
                guard connection.readAvailable() else { return }
            }
        }
    }

    // MARK: Messages

    private static func call(_ member: String, _ arguments: [Value]) -> Message {
        .call(destination: bus, path: busPath, interface: bus, member: member, arguments)
    }

    private static func cancel(_ path: String) -> Message {
        .call(destination: bus, path: path, interface: subscriptionInterface, member: "Cancel", [])
    }

    /// 64 patterns of exactly 1024 bytes, no empty segment: `a/` 507 times and `s<n>p<i>`, the
    /// set numbered `number` (distinct from the 9,000 sets around it).
    private static func longPatterns(_ number: Int) -> [String] {
        (0..<64).map { String(repeating: "a/", count: 507) + "s\(1000 + number % 9000)p\(1000 + $0)" }
    }

    /// `Subscribe(patterns, {})`, waiting for the path.
    private static func subscribe(_ patterns: [String], on connection: RawConnection) throws -> String {
        let reply = try connection.call(
            destination: bus, path: busPath, interface: bus, member: "Subscribe", [.strings(patterns), .vardict([])])
        guard let path = reply.first?.stringValue else { throw HarnessError("Subscribe returned no path") }
        return path
    }

    // MARK: Commands

    /// Waits for `word` on standard input (taking the commands up to it); `false` on `stop` or
    /// its end.
    private func waitFor(_ word: String) -> Bool {
        var descriptor = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
        while true {
            if let index = commands.firstIndex(where: { $0 == word || $0 == "stop" }) {
                let found = commands[index]
                commands.removeSubrange(...index)
                return found == word
            }
            if poll(&descriptor, 1, -1) > 0 { readCommands() }
        }
    }

    /// Reads standard input into `commands` (`stop` at its end).
    private func readCommands() {
        var chunk = [UInt8](repeating: 0, count: 256)
        let count = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
        if count > 0 {
            input.append(contentsOf: chunk[..<count])
            while let newline = input.firstIndex(of: UInt8(ascii: "\n")) {
                commands.append(String(decoding: input[..<newline], as: UTF8.self))
                input.removeSubrange(...newline)
            }
        } else if !(count < 0 && errno == EINTR) {
            commands.append("stop")
        }
    }

    private func emit(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
    }
}
