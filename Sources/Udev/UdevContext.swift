import CUdev

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A libudev library context (`struct udev`), the root every other libudev object hangs from.
///
/// libudev objects are not thread-safe, so this type is not `Sendable`: create it, and every
/// device, enumerator and monitor made from it, on one thread and use them there (NotifyBus
/// keeps them on an `EventLoopThread`).
///
/// Under umockdev (`LD_PRELOAD=libumockdev-preload.so.0` with `UMOCKDEV_DIR` set) libudev, and so
/// this type, sees the test bed's devices instead of the machine's.
public final class UdevContext {
    let pointer: OpaquePointer

    /// Creates a context. Wraps `udev_new`.
    /// - Throws: `UdevError` with operation `udev_new` when libudev cannot allocate one.
    public init() throws(UdevError) {
        clearErrno()
        guard let pointer = udev_new() else { throw .fromErrno("udev_new") }
        self.pointer = pointer
    }

    deinit { udev_unref(pointer) }

    /// The device at `syspath` (for example `/sys/class/power_supply/BAT0`), read afresh.
    /// Wraps `udev_device_new_from_syspath`.
    /// - Throws: `UdevError` (`ENODEV`/`ENOENT` when there is no such device).
    package func device(syspath: String) throws(UdevError) -> UdevDevice {
        clearErrno()
        guard let device = udev_device_new_from_syspath(pointer, syspath) else {
            throw .fromErrno("udev_device_new_from_syspath", default: ENODEV)
        }
        return UdevDevice(owning: device, context: self)
    }
}

@available(*, unavailable, message: "libudev objects are not thread-safe; keep them on one thread")
extension UdevContext: Sendable {}
