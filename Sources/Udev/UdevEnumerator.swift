import CUdev

/// A scan of sysfs for devices matching filters (`struct udev_enumerate`).
///
/// ```swift
/// let enumerator = try UdevEnumerator(context: udev)
/// try enumerator.matchSubsystem("power_supply")
/// for device in try enumerator.scanDevices() { print(device.sysname) }
/// ```
/// Not `Sendable`, like every libudev object.
package final class UdevEnumerator {
    let pointer: OpaquePointer
    let context: UdevContext

    /// Creates an enumerator with no filters. Wraps `udev_enumerate_new`.
    package init(context: UdevContext) throws(UdevError) {
        clearErrno()
        guard let pointer = udev_enumerate_new(context.pointer) else {
            throw .fromErrno("udev_enumerate_new")
        }
        self.pointer = pointer
        self.context = context
    }

    deinit { udev_enumerate_unref(pointer) }

    /// Keeps only devices of `subsystem`. Wraps `udev_enumerate_add_match_subsystem`.
    package func matchSubsystem(_ subsystem: String) throws(UdevError) {
        let result = udev_enumerate_add_match_subsystem(pointer, subsystem)
        if result < 0 { throw .fromResult("udev_enumerate_add_match_subsystem", result) }
    }

    /// Scans sysfs and returns the matching devices, each read afresh, in libudev's order
    /// (sorted by syspath). A device that vanishes during the scan is left out.
    /// Wraps `udev_enumerate_scan_devices`, `udev_enumerate_get_list_entry` and
    /// `udev_device_new_from_syspath`.
    package func scanDevices() throws(UdevError) -> [UdevDevice] {
        let result = udev_enumerate_scan_devices(pointer)
        if result < 0 { throw .fromResult("udev_enumerate_scan_devices", result) }
        var devices: [UdevDevice] = []
        var entry = udev_enumerate_get_list_entry(pointer)
        while let current = entry {
            if let name = udev_list_entry_get_name(current),
               let device = udev_device_new_from_syspath(context.pointer, name)
            {
                devices.append(UdevDevice(owning: device, context: context))
            }
            entry = udev_list_entry_get_next(current)
        }
        return devices
    }
}

@available(*, unavailable, message: "libudev objects are not thread-safe; keep them on one thread")
extension UdevEnumerator: Sendable {}
