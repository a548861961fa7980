import NotifyBus

/// Batteries and line power from udev's `power_supply` devices, published as the specification's
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
///   unannounced get `null` too. The timer runs only while there is a device: with none, it
///   waits for a uevent and does not wake.
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
/// The libudev objects live on a `SourceLoop`: the one given to `init` (shared with other
/// sources), or one the source starts for itself and stops when `run()` returns.
///
/// Where no udevd runs (many containers), libudev hands out a monitor that receives nothing
/// (systemd's libudev does so on purpose, so as not to leak the host's uevents into
/// containers): the source then still publishes the values at start and on every re-read (which
/// runs while it knows a device; a device plugged in when there was none is found by `reread()`).
/// Point it at a umockdev test bed like any libudev client (`LD_PRELOAD=libumockdev-preload.so.0`,
/// `UMOCKDEV_DIR`).
public typealias PowerSupplySource = SystemSource<PowerSupplyConfiguration>
