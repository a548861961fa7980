import CUdev

/// One udev device (`struct udev_device`): from an enumeration, a syspath, or a uevent.
///
/// A device that came from a uevent (`UdevMonitor.receiveDevice()`) carries the event's
/// `action` and the properties the event sent; a device read from sysfs has no action and the
/// properties of its `uevent` file and the udev database.
///
/// libudev caches each sysfs attribute the first time it is read through a device object, so
/// to see a changed attribute, get a new `UdevDevice` (enumerate again, or `UdevContext.device(syspath:)`).
/// Not `Sendable`, like every libudev object.
public final class UdevDevice {
    let pointer: OpaquePointer
    /// Keeps the library context alive for as long as the device is.
    let context: UdevContext

    /// Takes over one reference to `pointer`.
    init(owning pointer: OpaquePointer, context: UdevContext) {
        self.pointer = pointer
        self.context = context
    }

    deinit { udev_device_unref(pointer) }

    /// The kernel's name for the device, e.g. `BAT0`. Wraps `udev_device_get_sysname`.
    public var sysname: String { string(udev_device_get_sysname(pointer)) ?? "" }

    /// The full sysfs path, e.g. `/sys/devices/…/power_supply/BAT0`. Wraps `udev_device_get_syspath`.
    package var syspath: String { string(udev_device_get_syspath(pointer)) ?? "" }

    /// The path below `/sys`, e.g. `/devices/…/BAT0`. Wraps `udev_device_get_devpath`.
    package var devpath: String { string(udev_device_get_devpath(pointer)) ?? "" }

    /// The subsystem, e.g. `power_supply`; `nil` when it has none. Wraps `udev_device_get_subsystem`.
    public var subsystem: String? { string(udev_device_get_subsystem(pointer)) }

    /// The device type within its subsystem, if any. Wraps `udev_device_get_devtype`.
    package var devtype: String? { string(udev_device_get_devtype(pointer)) }

    /// The uevent action (`add`, `change`, `remove`, `bind`, …) for a device received from a monitor;
    /// `nil` for a device read from sysfs. Wraps `udev_device_get_action`.
    public var action: String? { string(udev_device_get_action(pointer)) }

    /// The uevent sequence number, 0 for a device read from sysfs. Wraps `udev_device_get_seqnum`.
    package var sequenceNumber: UInt64 { UInt64(udev_device_get_seqnum(pointer)) }

    /// The value of the udev property `name` (e.g. `POWER_SUPPLY_STATUS`), or `nil`.
    /// Wraps `udev_device_get_property_value`.
    public func property(_ name: String) -> String? {
        string(udev_device_get_property_value(pointer, name))
    }

    /// Every udev property, name to value. Wraps `udev_device_get_properties_list_entry`.
    package var properties: [String: String] {
        var result: [String: String] = [:]
        var entry = udev_device_get_properties_list_entry(pointer)
        while let current = entry {
            if let name = string(udev_list_entry_get_name(current)) {
                result[name] = string(udev_list_entry_get_value(current)) ?? ""
            }
            entry = udev_list_entry_get_next(current)
        }
        return result
    }

    /// The sysfs attribute `name` (e.g. `capacity`), with a trailing newline removed, or `nil`
    /// when the device has no such readable attribute. Wraps `udev_device_get_sysattr_value`.
    public func sysattr(_ name: String) -> String? {
        guard var value = string(udev_device_get_sysattr_value(pointer, name)) else { return nil }
        while value.last == "\n" { value.removeLast() }
        return value
    }

    private func string(_ pointer: UnsafePointer<CChar>?) -> String? {
        pointer.map { String(cString: $0) }
    }
}

@available(*, unavailable, message: "libudev objects are not thread-safe; keep them on one thread")
extension UdevDevice: Sendable {}
