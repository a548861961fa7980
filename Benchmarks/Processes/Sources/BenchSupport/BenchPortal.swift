/// The XDG portal's Settings interface as the daemon's `settings` source reads it
/// (`org.freedesktop.portal.Desktop`, `ReadAll`, `SettingChanged`), served by the benchmark on
/// its own connection: any number of `settings/<namespace>/<key>` keys, each change one signal
/// sent straight from here (its send time is the benchmark's clock, with no mock in between).
public final class BenchPortal {
    public static let name = "org.freedesktop.portal.Desktop"
    public static let path = "/org/freedesktop/portal/desktop"
    public static let interface = "org.freedesktop.portal.Settings"

    public let connection: RawConnection
    private var settings: [String: [String: Int64]] = [:]

    public init(address: String) throws {
        connection = try RawConnection(address: address)
        try connection.requestName(Self.name)
    }

    /// Sets a value without a signal (what `ReadAll` answers).
    public func store(namespace: String, key: String, value: Int64) {
        settings[namespace, default: [:]][key] = value
    }

    /// Sets a value and queues its `SettingChanged`; `flush()` writes the queue.
    public func change(namespace: String, key: String, value: Int64) {
        store(namespace: namespace, key: key, value: value)
        connection.send(.signal(
            path: Self.path, interface: Self.interface, member: "SettingChanged",
            [.string(namespace), .string(key), .variant(.int64(value))]))
    }

    public func flush() { connection.flush() }

    /// Answers the method calls that have arrived (without waiting); drops signals.
    public func serve() {
        connection.readAvailable()
        while let message = connection.pop() {
            guard message.isMethodCall else { continue }
            if message.interface == Self.interface, message.member == "ReadAll" {
                let patterns = message.arguments.first?.elements.compactMap(\.stringValue) ?? []
                let namespaces = settings.keys.sorted().filter { namespace in
                    patterns.isEmpty || patterns.contains { pattern in
                        pattern.hasSuffix("*") ? namespace.hasPrefix(String(pattern.dropLast())) : pattern == namespace
                    }
                }
                let reply = Value.array("{sa{sv}}", namespaces.map { namespace in
                    .dictEntry(.string(namespace), .vardict(
                        (settings[namespace] ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, .int64($0.value)) }))
                })
                connection.send(message.reply([reply]))
            } else {
                connection.send(message.error(
                    name: "org.freedesktop.DBus.Error.UnknownMethod", text: "\(message.member ?? "") is not served here"))
            }
            connection.flush()
        }
    }
}
