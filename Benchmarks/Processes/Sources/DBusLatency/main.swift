import CDBusRaw
import Harness
import DBus
import EpollLoop
import NotifyBus
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

// Each round: the emitter sends one broadcast signal carrying its send time (CLOCK_MONOTONIC ns);
// both receivers take the time when the signal reaches them and we wait for both before the
// next round (no queueing). The baseline is a bare libdbus client in a blocking
// read_write_dispatch loop on its own thread, the minimum a D-Bus client does. Ours is the
// DBus module's connection on an EventLoopThread, publishing into a NotificationBus, and a task
// iterating a subscription, as an app would.

ReportPart.runBegins()
let rounds = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 2000 : 2000
let warmup = 200

// MARK: A private bus

let privateBus = try PrivateBus(.session)
let address = privateBus.address

// MARK: Results

/// The bare receiver's times (a table per receiver; one is used: with 2 vCPUs, a third receiving
/// thread mostly measures CPU contention).
final class Times: Sendable {
    let table = Mutex<[Int64: Int64]>([:])
}
let bareTimes = [Times()]
let notifyBusTimes = Mutex<[Int64: Int64]>([:])

// MARK: The bare libdbus receiver

final class BareReceiver: Sendable {
    init(index: Int) {
        var error = CDBusRaw.DBusError()
        dbus_error_init(&error)
        guard let connection = address.withCString({ dbus_connection_open_private($0, &error) }) else { fatalError("bare connect") }
        dbus_connection_set_exit_on_disconnect(connection, 0)
        guard dbus_bus_register(connection, &error) != 0 else { fatalError("bare register") }
        dbus_bus_add_match(connection, "type='signal',interface='org.notifybus.Bench',member='Ping'", &error)
        dbus_connection_add_filter(connection, { _, message, data in
            let received = monotonicNanoseconds()
            guard let message, dbus_message_is_signal(message, "org.notifybus.Bench", "Ping") != 0 else {
                return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
            }
            var iter = DBusMessageIter()
            guard dbus_message_iter_init(message, &iter) != 0, dbus_message_iter_get_arg_type(&iter) == RAW_DBUS_TYPE_INT64 else {
                return DBUS_HANDLER_RESULT_HANDLED
            }
            var sent: Int64 = 0
            dbus_message_iter_get_basic(&iter, &sent)
            bareTimes[Int(bitPattern: data)].table.withLock { $0[sent] = received - sent }
            return DBUS_HANDLER_RESULT_HANDLED
        }, UnsafeMutableRawPointer(bitPattern: index), nil)
        // The connection is used only on that thread from now on.
        var thread = pthread_t()
        pthread_create(&thread, nil, { raw in
            let connection = OpaquePointer(raw!)
            while dbus_connection_read_write_dispatch(connection, -1) != 0 {}
            return nil
        }, UnsafeMutableRawPointer(connection))
        pthread_detach(thread)
    }
}

// MARK: Run

let bareBefore = BareReceiver(index: 0)
usleep(50_000)
let bus = NotificationBus()
let loop = try EventLoopThread(name: "bench-dbus")
let connectionKey = LoopLocalKey<DBusConnection>()
try loop.execute { context in
    let connection = DBusConnection(address: .address(address), context: context)
    _ = connection.signals(matching: DBusMatchRule(interface: "org.notifybus.Bench", member: "Ping")) { signal in
        guard case .int64(let sent)? = signal.arguments.first else { return }
        bus.publish("bench/ping", .integer(sent))
    }
    connection.connect()
    context[local: connectionKey] = connection
}
let subscription = bus.subscribe(["bench/ping"])
let consumer = Task.detached {
    for await event in subscription {
        let received = monotonicNanoseconds()
        guard case .integer(let sent)? = event.notification?.value else { continue }
        notifyBusTimes.withLock { $0[sent] = received - sent }
    }
}

// Ours has registered its match rule once it is connected.
for _ in 0..<200 {
    if try await loop.submit({ $0[local: connectionKey]?.isConnected ?? false }) { break }
    usleep(5_000)
}

let emitter = try DBusClient(address: .address(address))
try await emitter.waitUntilConnected()
try await Task.sleep(for: .milliseconds(300))  // both receivers registered their match rules

var baseline: [Int64] = []
var ours: [Int64] = []
for round in 0..<(warmup + rounds) {
    let sent = monotonicNanoseconds()
    try await emitter.emitSignal(path: "/org/notifybus/Bench", interface: "org.notifybus.Bench", member: "Ping", arguments: [.int64(sent)])
    var spins = 0
    while true {
        let a = bareTimes[0].table.withLock { $0[sent] }
        let b = notifyBusTimes.withLock { $0[sent] }
        if let a, let b {
            if round >= warmup {
                baseline.append(a)
                ours.append(b)
            }
            break
        }
        spins += 1
        if spins > 200_000 {
            let a = bareTimes[0].table.withLock { $0[sent] != nil }, b = notifyBusTimes.withLock { $0[sent] != nil }
            print("round \(round): lost a signal (bare \(a), notifybus \(b))"); fflush(nil)
            break
        }
        if spins > 100 { usleep(20) }
    }
}
consumer.cancel()

/// A receiver's row: p50, p90 and p99 in µs.
func line(_ name: String, _ values: [Int64]) -> String {
    let samples = Samples(values)
    return "| \(name) | " + [samples.p50, samples.p90, samples.p99].map { Figure.decimal(Double($0) / 1000, places: 1) }.joined(separator: " | ") + " |"
}

var part = ReportPart("dbus-latency")
part.line("D-Bus signal → receiver latency, \(rounds) signals on a private bus (µs)")
part.line()
part.header(["receiver", "p50", "p90", "p99"])
part.line(line("bare libdbus (read_write_dispatch thread)", baseline))
part.line(line("NotifyBus (DBusConnection → bus → async subscriber)", ours))
let ratio = Double(Samples(ours).p50) / Double(Samples(baseline).p50)
part.line()
part.line("p50: NotifyBus / the bare client \(Figure.decimal(ratio, places: 2))× (target ≤ 1.1×): \(Figure.verdict(ratio <= 1.1)).")
try part.finish()
await emitter.close()
await loop.shutdown()
