import Udev

extension BacklightReading: UdevDeviceReading {
    static var subsystem: String { "backlight" }

    /// No backlight is a machine without one (a desktop, a server): nothing to publish, no fault.
    static var statusWithoutDevices: SourceStatus { .running }

    /// The device's brightness, from its sysfs attributes (backlight uevents carry none).
    static func values(of device: UdevDevice) -> UdevDeviceValues {
        do {
            return .values(try BacklightReading(name: device.sysname, attribute: device.sysattr).values)
        } catch {
            return .skipped(reason: error.description)
        }
    }
}
