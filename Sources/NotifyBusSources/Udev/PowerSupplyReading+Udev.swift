import Udev

extension PowerSupplyReading: UdevDeviceReading {
    static var subsystem: String { "power_supply" }

    static var statusWithoutDevices: SourceStatus { .unavailable(reason: "no power_supply devices") }

    /// The device's values, each from its udev property, else its sysfs attribute.
    static func values(of device: UdevDevice) -> UdevDeviceValues {
        let reading = PowerSupplyReading(name: device.sysname) { property, attribute in
            device.property(property) ?? device.sysattr(attribute)
        }
        return reading.map { .values($0.values) } ?? .ignored
    }
}
