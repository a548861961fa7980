import NotifyBus
import Udev

/// What a udev source reads from each device of its subsystem: `PowerSupplyReading` for
/// `power_supply`, `BacklightReading` for `backlight`. `UdevSubsystemWatcher` does the rest.
protocol UdevDeviceReading: Sendable {
    /// The udev subsystem whose devices are read, e.g. `power_supply`.
    static var subsystem: String { get }
    /// The source's status while it watches and no device of the subsystem is there.
    static var statusWithoutDevices: SourceStatus { get }
    /// The keys and values of `device` (a uevent's or a scan's), in publishing order.
    static func values(of device: UdevDevice) -> UdevDeviceValues
}

/// What one device of a udev source maps onto.
enum UdevDeviceValues {
    /// These keys and values, in publishing order.
    case values([(key: String, value: JSONValue)])
    /// No key: the device is not one the source publishes (a power supply of no known type).
    case ignored
    /// No key this time: what the device says is unusable (the reason is logged); the values
    /// it published before stay.
    case skipped(reason: String)
}
