import EpollLoop
import NotifyBus
import Udev

/// Batteries and line power from udev's `power_supply` devices, published as CONTRACT.md §1's
/// `battery/<name>/state`, `battery/<name>/level` and `power/<name>/online`.
///
/// ```swift
/// let bus = NotificationBus()
/// let power = PowerSupplySource(bus: bus)
/// try await withThrowingTaskGroup(of: Void.self) { group in
///     group.addTask { try await power.run() }       // until cancelled
///     for await notification in bus.subscribe(["battery/**", "power/**"]).notifications { … }
/// }
/// ```
///
/// What it does while running:
/// - At start it lists every `power_supply` device and publishes its current values (see
///   `PowerSupplyReading` for the mapping of types, states and levels).
/// - It listens to udev's uevents for the subsystem (`udev_monitor_new_from_netlink(udev,
///   "udev")`): on `add` and `change` it reads the device from the event's properties, falling
///   back to sysfs attributes; on `remove` each of the device's keys gets `null`, meaning "the
///   device went away".
/// - Every `Configuration.rereadInterval` (60 s by default) it reads everything again, because
///   real batteries do not send a uevent for every capacity step; devices that vanished
///   unannounced get `null` too.
/// - When the monitor socket overflows (`ENOBUFS`: uevents were lost) it reads everything again.
/// - `reread()` does the same on demand (the CLI calls it after `SIGCONT`).
///
/// Every publication goes through `NotificationBus.publishIfChanged`: a uevent or a re-read that
/// repeats a key's current value publishes nothing for that key, so subscribers (and the
/// `coalesced` counts of a flush) see only real changes.
///
/// Status: `running` while it watches at least one device; `unavailable` with a reason when
/// there is no power_supply device (it keeps watching for one to be plugged in) or no access
/// to udev events; `failed` when libudev or the monitor socket fails unexpectedly. None of these
/// throws or crashes.
///
/// The libudev objects live on an `EventLoopThread`: the one given to `init` (shared with other
/// sources), or one the source starts for itself and stops when `run()` returns.
///
/// Where no udevd runs (many containers), libudev hands out a monitor that receives nothing
/// (systemd's libudev does so on purpose, so as not to leak the host's uevents into
/// containers): the source then still publishes the values at start and on every re-read.
/// Point it at a umockdev test bed like any libudev client (`LD_PRELOAD=libumockdev-preload.so.0`,
/// `UMOCKDEV_DIR`).
public final class PowerSupplySource: NotifyBusSource {
    /// How the source behaves.
    public struct Configuration: Sendable {
        /// How often to read every device again, to catch changes that came without a uevent;
        /// `nil` for never. Default 60 s (upowerd polls every 30 s).
        public var rereadInterval: Duration?
        /// A test hook that makes the udev monitor report failures such as `ENOBUFS`; leave `nil`.
        public var faults: UdevFaultInjector?

        /// Creates a configuration.
        public init(rereadInterval: Duration? = .seconds(60), faults: UdevFaultInjector? = nil) {
            self.rereadInterval = rereadInterval
            self.faults = faults
        }
    }

    /// `"power"`.
    public let name = "power"
    /// `battery/*/state`, `battery/*/level`, `power/*/online`.
    public let keyPatterns: [KeyPattern] = ["battery/*/state", "battery/*/level", "power/*/online"]
    /// The bus it publishes to.
    public let bus: NotificationBus
    /// Its configuration.
    public let configuration: Configuration

    private let host: LoopSourceHost<PowerSupplyWatcher>

    /// Creates the source; nothing happens until `run()`.
    /// - Parameters:
    ///   - bus: where to publish.
    ///   - loop: the event loop to keep the libudev objects on, shared with other sources; when
    ///     `nil`, `run()` starts a loop of its own and stops it on return.
    ///   - configuration: the re-read interval, and test hooks.
    public init(bus: NotificationBus, loop: EventLoopThread? = nil, configuration: Configuration = Configuration()) {
        self.bus = bus
        self.configuration = configuration
        host = LoopSourceHost(name: "power", loop: loop)
    }

    /// The status it last reported.
    public var status: SourceStatus { host.reporter.current }

    /// The current status, then every change, until `run()` returns.
    public func statusUpdates() -> AsyncStream<SourceStatus> { host.reporter.updates() }

    /// Works until the task is cancelled: publishes the current values, then every change.
    /// - Throws: `SourceError.alreadyRunning` if it is running already; `SourceError.eventLoop`
    ///   when its event loop cannot start or was shut down under it.
    public func run() async throws {
        let bus = self.bus
        let configuration = self.configuration
        let reporter = host.reporter
        try await host.run { context in
            PowerSupplyWatcher(bus: bus, configuration: configuration) { reporter.report($0) }
        }
    }

    /// Reads every device again and publishes what differs from the store (and `null` for devices
    /// that went away); returns when done. Does nothing when the source is not running.
    public func reread() async { await host.reread() }
}
