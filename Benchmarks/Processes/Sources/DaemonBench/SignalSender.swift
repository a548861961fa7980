import BenchSupport
import Harness
import CDBusRaw

#if canImport(Glibc)
import Glibc
#endif

/// `DaemonBench sender`: the fan-out's unicast anchor, what notifybusd does for a change reduced
/// to raw libdbus. It has a match rule on the portal's `SettingChanged` (`arg0` its namespace),
/// like the daemon's `settings` source, and for each one it sends one unicast `Events` signal to
/// every connection of `--destinations` (unique names, comma-separated): path
/// `/org/notifybus/Bus1/subscription/<n>`, each message built and marshalled on its own
/// (`dbus_message_new_signal`, `set_destination`, libdbus's iterators straight from the values,
/// as a C program would) with one element as notifybusd
/// sends a live event: `type`, `t`, `time`, `seq` (per destination), `key`, `value` (JSON text),
/// `coalesced`, `previous`, `kind`, `first`, `last`. The RFC 3339 time is written once per
/// change. Then it flushes. It prints `ready` once its rule is in place; end of input ends it.
final class SignalSender {
    private let connection: RawConnection
    private let namespace: String
    private let destinations: [String]
    private var seqs: [UInt64]
    private var previous: [String: String] = [:]
    private let started = monotonicNanoseconds()

    init(arguments: Arguments) throws {
        connection = try RawConnection(address: arguments.string("address", default: ""))
        namespace = arguments.string("namespace", default: "bench")
        destinations = arguments.string("destinations", default: "").split(separator: ",").map(String.init)
        guard !destinations.isEmpty else { throw HarnessError("sender: --destinations names no connection") }
        seqs = Array(repeating: 1, count: destinations.count)
        try connection.addMatch(
            "type='signal',sender='\(BenchPortal.name)',interface='\(BenchPortal.interface)',"
                + "member='SettingChanged',arg0='\(namespace)'")
    }

    /// Serves until its standard input ends.
    func run() {
        let ready = Array("ready\n".utf8)
        _ = ready.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        var descriptors = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: connection.fileDescriptor, events: Int16(POLLIN), revents: 0)]
        var scratch = [UInt8](repeating: 0, count: 256)
        while true {
            while let message = connection.pop() { handle(message) }
            guard poll(&descriptors, 2, -1) > 0 else { continue }
            if descriptors[0].revents != 0 {
                let count = scratch.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
                if count == 0 || (count < 0 && errno != EINTR) { return }
            }
            if descriptors[1].revents != 0, !connection.readAvailable() { return }
        }
    }

    private func handle(_ message: Message) {
        guard message.isSignal(interface: BenchPortal.interface, member: "SettingChanged") else { return }
        let arguments = message.arguments
        guard arguments.count == 3, let name = arguments[1].stringValue, let number = arguments[2].int64Value else { return }
        let key = "settings/\(namespace)/\(name)"
        let value = "\(number)"
        let t = Double(monotonicNanoseconds() - started) / 1e9
        let time = Self.rfc3339Now()
        let previous = previous[key]
        for (index, destination) in destinations.enumerated() {
            let message = Message(owning: dbus_message_new_signal(
                "/org/notifybus/Bus1/subscription/\(index + 1)", "org.notifybus.Subscription1", "Events")!)
            dbus_message_set_destination(message.handle, destination)
            var top = DBusMessageIter()
            var elements = DBusMessageIter()
            var element = DBusMessageIter()
            dbus_message_iter_init_append(message.handle, &top)
            dbus_message_iter_open_container(&top, RAW_DBUS_TYPE_ARRAY, "a{sv}", &elements)
            dbus_message_iter_open_container(&elements, RAW_DBUS_TYPE_ARRAY, "{sv}", &element)
            Self.entry(&element, "type", string: "notification")
            Self.entry(&element, "t", RAW_DBUS_TYPE_DOUBLE, "d", t)
            Self.entry(&element, "time", string: time)
            Self.entry(&element, "seq", RAW_DBUS_TYPE_UINT64, "t", seqs[index])
            Self.entry(&element, "key", string: key)
            Self.entry(&element, "value", string: value)
            Self.entry(&element, "coalesced", RAW_DBUS_TYPE_UINT32, "u", UInt32(1))
            if let previous { Self.entry(&element, "previous", string: previous) }
            Self.entry(&element, "kind", string: "live")
            Self.entry(&element, "first", RAW_DBUS_TYPE_DOUBLE, "d", t)
            Self.entry(&element, "last", RAW_DBUS_TYPE_DOUBLE, "d", t)
            dbus_message_iter_close_container(&elements, &element)
            dbus_message_iter_close_container(&top, &elements)
            seqs[index] += 1
            connection.send(message)
        }
        self.previous[key] = value
        connection.flush()
    }

    /// Appends the entry `key` → a variant holding a string.
    private static func entry(_ dictionary: inout DBusMessageIter, _ key: String, string: String) {
        string.withCString { pointer in
            var argument: UnsafePointer<CChar>? = pointer
            entry(&dictionary, key, RAW_DBUS_TYPE_STRING, "s", &argument)
        }
    }

    /// Appends the entry `key` → a variant holding `value`, of D-Bus type `type` (`signature`).
    private static func entry<T>(_ dictionary: inout DBusMessageIter, _ key: String, _ type: Int32, _ signature: String, _ value: T) {
        var value = value
        entry(&dictionary, key, type, signature, &value)
    }

    private static func entry<T>(
        _ dictionary: inout DBusMessageIter, _ key: String, _ type: Int32, _ signature: String, _ value: inout T
    ) {
        var pair = DBusMessageIter()
        var variant = DBusMessageIter()
        dbus_message_iter_open_container(&dictionary, RAW_DBUS_TYPE_DICT_ENTRY, nil, &pair)
        key.withCString { pointer in
            var argument: UnsafePointer<CChar>? = pointer
            _ = dbus_message_iter_append_basic(&pair, RAW_DBUS_TYPE_STRING, &argument)
        }
        dbus_message_iter_open_container(&pair, RAW_DBUS_TYPE_VARIANT, signature, &variant)
        _ = withUnsafeMutablePointer(to: &value) { dbus_message_iter_append_basic(&variant, type, $0) }
        dbus_message_iter_close_container(&pair, &variant)
        dbus_message_iter_close_container(&dictionary, &pair)
    }

    /// The wall-clock time now as notifybusd writes `time`: `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    private static func rfc3339Now() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        var seconds = spec.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let millis = spec.tv_nsec / 1_000_000
        let fraction = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(fraction)Z"
    }
}
