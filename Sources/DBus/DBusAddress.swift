#if canImport(Glibc)
import Glibc
#endif

/// Which bus to connect to.
///
/// `.system` and `.session` are resolved at each connection attempt (so a reconnection picks up
/// the current value): `.system` from `DBUS_SYSTEM_BUS_ADDRESS`, else
/// `unix:path=/var/run/dbus/system_bus_socket`; `.session` from `DBUS_SESSION_BUS_ADDRESS`
/// (there is no default: without it the session bus is unavailable, and a connection does not
/// try again by itself).
public enum DBusAddress: Sendable, Hashable, CustomStringConvertible {
    /// The system bus.
    case system
    /// The user's session bus.
    case session
    /// A D-Bus server address, e.g. `unix:path=/tmp/bus/socket`.
    case address(String)

    /// The value of the process's environment variable `name` (`getenv`).
    @usableFromInline
    static func processEnvironment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// The system bus's address when `DBUS_SYSTEM_BUS_ADDRESS` is unset.
    public static let defaultSystemBusAddress = "unix:path=/var/run/dbus/system_bus_socket"

    /// The address to connect to, given the environment `lookup` (by default the process's).
    /// - Throws: `DBusError` (`BadAddress`) when the session bus address is unset.
    public func resolve(environment lookup: (String) -> String? = Self.processEnvironment) throws(DBusError) -> String {
        switch self {
        case .system:
            if let value = lookup("DBUS_SYSTEM_BUS_ADDRESS"), !value.isEmpty { return value }
            return Self.defaultSystemBusAddress
        case .session:
            if let value = lookup("DBUS_SESSION_BUS_ADDRESS"), !value.isEmpty { return value }
            throw DBusError(name: DBusError.Name.badAddress, message: "DBUS_SESSION_BUS_ADDRESS is not set")
        case .address(let address):
            return address
        }
    }

    /// The bus in words (`system bus`, `session bus`) or the address.
    public var description: String {
        switch self {
        case .system: "system bus"
        case .session: "session bus"
        case .address(let address): address
        }
    }
}
