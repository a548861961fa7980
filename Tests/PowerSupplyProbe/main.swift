// A test helper: runs PowerSupplySource (or DisplaySource, ThermalSource) in its own process (so that umockdev's
// LD_PRELOAD can sit under libudev) and prints what a subscriber receives as JSON Lines on standard output.
//
//   PowerSupplyProbe [--source power|display|thermal] [--reread-interval SECONDS] [--fd-floor N]
//
// --source           which udev source to run (default power); thermal also follows power-profiles-daemon
//                    on the system bus of DBUS_SYSTEM_BUS_ADDRESS
// --reread-interval  the source's re-read period (default 3600; 0 turns the timer off)
// --fd-floor         open regular files until descriptors below N are taken, so that this
//                    process's netlink socket gets a number no other process in the same test
//                    bed uses (umockdev names each emulated socket after its fd number, and a
//                    second socket with the same number silently takes the first one's events)
//
// Standard input takes one command per line, each answered by {"type":"ack","command":...}
// once done: suspend, resume (the subscriber), reread (source.reread(), waited for),
// overflow (the next receive on the udev monitor fails with ENOBUFS), sync, quit.
//
// sync is a barrier: a job that runs on the source's loop. A uevent sent before the command was
// written is handled before the ack: when the loop reads the command, the monitor socket is
// already readable, so the same epoll round handles it, and the job only runs in a later round.
//
// Output lines:
//   {"type":"notification","key":…,"value":…,"coalesced":…,"previous":…,"kind":…}
//   {"type":"suspended"}  {"type":"resumed","flushed":N}  {"type":"resync","reason":…}
//   {"type":"source","source":"power" or "display","status":…,"reason":…}
//   {"type":"reported","status":…,"store":{key: value, …}}: a status change as the source reports
//     it, written on its loop thread right after the report, with the bus's store at that moment
//     (the "source" lines come later, from the status stream, in no fixed order with notifications)
//   {"type":"ack","command":…}  {"type":"error","message":…}

import EpollLoop
import Logging
import NotifyBus
import NotifyBusSources
import Udev

#if canImport(Glibc)
import Glibc
#endif

func emit(_ members: [(String, JSONValue)]) {
    let line = Array((JSONValue.object(JSONObject(members)).jsonText + "\n").utf8)
    line.withUnsafeBytes { bytes in
        var offset = 0
        while offset < bytes.count {
            let n = write(1, bytes.baseAddress! + offset, bytes.count - offset)
            if n <= 0 { return }
            offset += n
        }
    }
}

func emit(_ event: SubscriptionEvent) {
    switch event {
    case .notification(let n):
        var members: [(String, JSONValue)] = [
            ("type", "notification"), ("key", .string(n.key)), ("value", n.value),
            ("coalesced", .integer(Int64(n.coalesced))),
        ]
        if let previous = n.previous { members.append(("previous", previous)) }
        members.append(("kind", .string("\(n.kind)")))
        emit(members)
    case .suspended:
        emit([("type", "suspended")])
    case .resumed(_, let flushed):
        emit([("type", "resumed"), ("flushed", .integer(Int64(flushed)))])
    case .resync(_, let reason):
        emit([("type", "resync"), ("reason", .string(reason.rawValue))])
    }
}

var rereadInterval: Duration? = .seconds(3600)
var fdFloor: Int32 = 0
var sourceName = "power"
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--reread-interval":
        let seconds = arguments.popFirst().flatMap(Double.init) ?? 3600
        rereadInterval = seconds > 0 ? .milliseconds(Int64(seconds * 1000)) : nil
    case "--source":
        sourceName = arguments.popFirst() ?? sourceName
    case "--fd-floor":
        fdFloor = arguments.popFirst().flatMap { Int32($0) } ?? 0
    default:
        emit([("type", "error"), ("message", .string("unknown argument \(argument)"))])
        exit(2)
    }
}

// Take the low descriptors with regular files (not /dev/null: umockdev's preload tracks /dev
// descriptors in a small table and aborts when it overflows).
while fdFloor > 0 {
    let fd = open(CommandLine.arguments[0], O_RDONLY | O_CLOEXEC)
    if fd < 0 || fd >= fdFloor - 1 { break }
}

/// What the source skips (warnings and worse) to standard error, as swift-log's stream handler
/// writes it; each status change (`status: …`, logged at debug right after the source reported
/// it) as a `reported` line with the bus's store.
struct ProbeLogHandler: LogHandler {
    let bus: NotificationBus
    var stream: StreamLogHandler
    var logLevel: Logger.Level = .debug
    var metadata: Logger.Metadata {
        get { stream.metadata }
        set { stream.metadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { stream[metadataKey: key] }
        set { stream[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        let message = "\(event.message)"
        if message.hasPrefix("status: ") {
            let status = message.dropFirst("status: ".count).prefix { $0 != ":" }
            let store = JSONObject(bus.snapshot().map { ($0.key, $0.value) })
            emit([("type", "reported"), ("status", .string(String(status))), ("store", .object(store))])
        }
        if event.level >= .warning { stream.log(event: event) }
    }
}

let bus = NotificationBus()
let faults = UdevFaultInjector()
var logger = Logger(label: "probe") { label in ProbeLogHandler(bus: bus, stream: StreamLogHandler.standardError(label: label)) }
logger.logLevel = .debug
let loop = try EventLoopThread(name: "probe")
let source: any NotifyBusSource = switch sourceName {
case "thermal":
    ThermalSource(
        bus: bus, loop: SourceLoop(thread: loop),
        configuration: .init(rereadInterval: rereadInterval ?? .seconds(3600)), logger: logger)
case "display":
    DisplaySource(
        bus: bus, loop: SourceLoop(thread: loop), configuration: .init(rereadInterval: rereadInterval, faults: faults),
        logger: logger)
default:
    PowerSupplySource(
        bus: bus, loop: SourceLoop(thread: loop), configuration: .init(rereadInterval: rereadInterval, faults: faults),
        logger: logger)
}
let subscription = bus.subscribe(source.keyPatterns) { emit($0) }

// Standard input, read on the loop, as an AsyncStream of lines.
let (commands, commandInput) = AsyncStream.makeStream(of: String.self)
_ = fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK)
try await loop.submit { context in
    var pending: [UInt8] = []
    var registration: IORegistration?
    registration = try? context.register(fileDescriptor: 0, interest: .readable) { _ in
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(0, &buffer, buffer.count)
            if n > 0 {
                pending += buffer[0..<n]
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    commandInput.yield(String(decoding: pending[..<newline], as: UTF8.self))
                    pending.removeSubrange(...newline)
                }
            } else if n == 0 || (errno != EAGAIN && errno != EINTR) {
                if let registration { context.deregister(registration) }
                commandInput.finish()
                return
            } else if errno == EAGAIN {
                return
            }
        }
    }
    if registration == nil { commandInput.finish() }
}

try await withThrowingTaskGroup(of: Void.self) { group in
    group.addTask { try await source.run() }
    group.addTask {
        for await status in source.statusUpdates() where status.reason != "not started" {
            var members: [(String, JSONValue)] = [
                ("type", "source"), ("source", .string(source.name)), ("status", .string(status.name)),
            ]
            if let reason = status.reason { members.append(("reason", .string(reason))) }
            emit(members)
        }
    }
    commandLoop: for await command in commands {
        switch command {
        case "suspend": subscription.suspend()
        case "resume": subscription.resume()
        case "reread": await source.reread()
        case "overflow": faults.failNextReceive(errno: ENOBUFS)
        case "sync": try? await loop.submit { _ in }
        case "quit":
            emit([("type", "ack"), ("command", "quit")])
            break commandLoop
        default:
            emit([("type", "error"), ("message", .string("unknown command \(command)"))])
            continue commandLoop
        }
        emit([("type", "ack"), ("command", .string(command))])
    }
    group.cancelAll()
    try await group.waitForAll()
}
subscription.cancel()
await loop.shutdown()
