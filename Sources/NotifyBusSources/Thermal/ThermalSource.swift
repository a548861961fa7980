public import DBus

/// How hot the machine runs, published as the specification's (Source keys and values) `thermal/state`: `"nominal"`, `"fair"`,
/// `"serious"` or `"critical"` (iOS's `ProcessInfo.ThermalState`).
///
/// The worst of two things:
/// - udev's `thermal` zones (`thermal_zone<N>`): each zone's `temp` against its trip points (see
///   `ThermalZoneReading`). A zone is read when udev reports it (`add`, `change`), and every zone
///   again every `Configuration.rereadInterval` (10 s) while at least one exists, as kernels
///   rarely send a uevent for a temperature change; with no zone there is no timer. Cooling
///   devices of the subsystem, and zones whose `temp` cannot be read, do not count.
/// - power-profiles-daemon's `PerformanceDegraded` on the system bus, from
///   `org.freedesktop.UPower.PowerProfiles` while it has an owner, else `net.hadess.PowerProfiles`
///   (as `PowerProfileSource` chooses): a list naming `high-operating-temperature` makes the
///   state at least `"serious"`. It no longer counts once the daemon leaves or the bus goes.
///
/// The state is published once both are known (the zones scanned, the daemon read or known
/// absent), then the source reports `running`: with no zone and no daemon it is `running` with
/// `"nominal"`. Where udev cannot be used the zones do not count and the problem is logged.
/// `reread()` reads every zone and the daemon's properties again.
public typealias ThermalSource = SystemSource<ThermalConfiguration>

/// How `ThermalSource` behaves.
public struct ThermalConfiguration: Sendable {
    /// The bus power-profiles-daemon is on (the system bus, honouring `DBUS_SYSTEM_BUS_ADDRESS`).
    public var address: DBusAddress
    /// Timeouts, and reconnection backoff.
    public var connection: DBusConnection.Configuration
    /// How often every zone is read again while one exists: 10 s (specification: Source keys and values), no more often.
    public var rereadInterval: Duration

    /// Creates a configuration.
    public init(
        address: DBusAddress = .system, connection: DBusConnection.Configuration = .init(defaultTimeout: .seconds(10)),
        rereadInterval: Duration = .seconds(10)
    ) {
        self.address = address
        self.connection = connection
        self.rereadInterval = max(rereadInterval, .seconds(10))
    }
}
