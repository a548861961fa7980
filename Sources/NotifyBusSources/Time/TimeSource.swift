public import DBus
import NotifyBus

/// The local time zone and what follows from it, published as the specification's `time/zone`
/// (an IANA name, e.g. `"Europe/Berlin"`), `time/utc-offset` (seconds east of UTC now, e.g.
/// `3600`) and `time/date` (the local date, `"YYYY-MM-DD"`).
///
/// What it does:
/// - The zone is the target of the `/etc/localtime` link after its last `zoneinfo/`
///   component, read with `readlink` one level (`../usr/share/zoneinfo/Europe/Berlin` →
///   `Europe/Berlin`; `…/zoneinfo/UTC` stays `UTC`). No link at all is `UTC`, as glibc takes it.
///   A regular file there (or a link outside any `zoneinfo/`) has no name of its own: then
///   timedated's `Timezone` names it when timedated said one, and its offsets are read from the
///   file itself.
/// - It watches `/etc` with inotify for the name `localtime` (the link is replaced, never
///   edited), and follows systemd-timedated (`org.freedesktop.timedate1` on the system bus):
///   its `PropertiesChanged` only prompts a re-read of the link. timedated exits when idle and
///   is bus-activated again under a new unique name; the connection's name-owner tracking
///   follows it, and a new owner is read again.
/// - The offset and the date come from the zone's TZif data (`/usr/share/zoneinfo/<zone>`,
///   read by `TimeZoneRules`, pure Swift). A zone whose data cannot be read counts as UTC (as
///   glibc does), logged.
/// - It wakes at the next local midnight and the next change of the zone's offset (whichever
///   is first), and when the system clock is set (a `timerfd` with `TFD_TIMER_CANCEL_ON_SET`,
///   through `configuration.clock`), and re-evaluates then. No other wake-ups.
/// - Every read publishes through `publishIfChanged`.
///
/// Status: `running` from the start; it never reports itself unavailable because timedated or
/// the bus is absent (the link is the truth). A `Timezone` of the wrong type is logged and skipped.
public typealias TimeSource = SystemSource<TimeConfiguration>

/// How `TimeSource` behaves.
public struct TimeConfiguration: Sendable {
    /// The bus timedated is on (the system bus, honouring `DBUS_SYSTEM_BUS_ADDRESS`).
    public var address: DBusAddress
    /// The zone link, `/etc/localtime`.
    public var localtime: String
    /// The zone database, `/usr/share/zoneinfo`.
    public var zoneinfo: String
    /// The wall clock: the system's, or one a test moves by hand.
    public var clock: any WallClock
    /// Timeouts, and reconnection backoff.
    public var connection: DBusConnection.Configuration

    /// Creates a configuration.
    public init(
        address: DBusAddress = .system, localtime: String = "/etc/localtime",
        zoneinfo: String = "/usr/share/zoneinfo", clock: any WallClock = SystemWallClock(),
        connection: DBusConnection.Configuration = .init(defaultTimeout: .seconds(10))
    ) {
        self.address = address
        self.localtime = localtime
        self.zoneinfo = zoneinfo
        self.clock = clock
        self.connection = connection
    }
}

extension SystemSource where Settings == TimeConfiguration {
    /// The zone name in a `/etc/localtime` link target: what follows its last `zoneinfo`
    /// component (`../usr/share/zoneinfo/Europe/Berlin` → `Europe/Berlin`); `nil` when there is
    /// no such component, nothing follows it, or a `..` does.
    public static func zoneName(fromLinkTarget target: String) -> String? {
        let components = target.split(separator: "/")
        guard let index = components.lastIndex(of: "zoneinfo") else { return nil }
        let name = components[(index + 1)...]
        guard !name.isEmpty, !name.contains(".."), !name.contains(".") else { return nil }
        return name.joined(separator: "/")
    }
}
