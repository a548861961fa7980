public import DBus
import NotifyBus

/// The active power profile from power-profiles-daemon on the system bus, published as
/// the specification's `power/profile`: `"power-saver"`, `"balanced"` or `"performance"` (iOS's Low
/// Power Mode is `"power-saver"`).
///
/// What it does:
/// - Follows two names: `org.freedesktop.UPower.PowerProfiles`
///   (`/org/freedesktop/UPower/PowerProfiles`, served by power-profiles-daemon ≥ 0.20) and the
///   older `net.hadess.PowerProfiles` (`/net/hadess/PowerProfiles`, the only one of 0.12 and
///   earlier), each with the interface of its name.
/// - Reads `ActiveProfile` (`GetAll`) from the new name while it has an owner, else from the old
///   one, then follows `PropertiesChanged` from that name's owner. It switches as either name
///   appears or leaves (a restart, an upgrade): the value is read again from the name in use.
/// - A string other than the three profiles is published as it is; an `ActiveProfile` of
///   another type is logged (key `power/profile`) and skipped.
/// - `reread()` reads `ActiveProfile` again from the name in use.
///
/// Status: `running` while one of the names is served and answered; `unavailable` while
/// neither has an owner or the bus is unreachable (the key keeps its last value; it keeps
/// watching both names and reconnecting).
public typealias PowerProfileSource = SystemSource<PowerProfileConfiguration>

/// How `PowerProfileSource` behaves.
public struct PowerProfileConfiguration: Sendable {
    /// The bus power-profiles-daemon is on (the system bus, honouring `DBUS_SYSTEM_BUS_ADDRESS`).
    public var address: DBusAddress
    /// Timeouts, and reconnection backoff.
    public var connection: DBusConnection.Configuration

    /// Creates a configuration.
    public init(address: DBusAddress = .system, connection: DBusConnection.Configuration = .init(defaultTimeout: .seconds(10))) {
        self.address = address
        self.connection = connection
    }
}
