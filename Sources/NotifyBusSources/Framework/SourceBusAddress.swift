import DBus

/// Which D-Bus bus a source connects to, without importing the `DBus` module.
///
/// `.system` and `.session` are resolved at each connection attempt (so a reconnection picks up
/// the current value): `.system` from `DBUS_SYSTEM_BUS_ADDRESS`, else
/// `unix:path=/var/run/dbus/system_bus_socket`; `.session` from `DBUS_SESSION_BUS_ADDRESS`
/// (without it the session bus is unavailable).
public enum SourceBusAddress: Sendable, Hashable, CustomStringConvertible {
    /// The system bus.
    case system
    /// The user's session bus.
    case session
    /// A D-Bus server address, e.g. `unix:path=/tmp/bus/socket`.
    case address(String)

    /// `system bus`, `session bus`, or the address.
    public var description: String { dbus.description }

    /// The same bus as the `DBus` module names it.
    var dbus: DBusAddress {
        switch self {
        case .system: .system
        case .session: .session
        case .address(let address): .address(address)
        }
    }
}

/// How a D-Bus source's connection behaves: timeouts and reconnection backoff.
public struct SourceConnectionOptions: Sendable {
    /// The same options as the `DBus` module's connection takes them.
    var dbus: DBusConnection.Configuration

    /// Creates the options.
    /// - Parameters:
    ///   - reconnects: whether to connect again after the bus went away or could not be reached.
    ///   - initialBackoff: the first wait before connecting again; it doubles after each failed
    ///     attempt, up to `maximumBackoff`.
    ///   - maximumBackoff: the longest wait between attempts.
    ///   - defaultTimeout: the timeout of method calls.
    public init(
        reconnects: Bool = true, initialBackoff: Duration = .milliseconds(100),
        maximumBackoff: Duration = .seconds(30), defaultTimeout: Duration = .seconds(25)
    ) {
        dbus = .init(
            reconnects: reconnects, initialBackoff: initialBackoff, maximumBackoff: maximumBackoff,
            defaultTimeout: defaultTimeout)
    }

    /// Whether to connect again after the bus went away or could not be reached.
    public var reconnects: Bool { get { dbus.reconnects } set { dbus.reconnects = newValue } }

    /// The first wait before connecting again; it doubles after each failed attempt.
    public var initialBackoff: Duration { get { dbus.initialBackoff } set { dbus.initialBackoff = newValue } }

    /// The longest wait between attempts.
    public var maximumBackoff: Duration { get { dbus.maximumBackoff } set { dbus.maximumBackoff = newValue } }

    /// The timeout of method calls.
    public var defaultTimeout: Duration { get { dbus.defaultTimeout } set { dbus.defaultTimeout = newValue } }
}
