import CUdev

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A listener for uevents (`struct udev_monitor`) on a non-blocking socket.
///
/// ```swift
/// let monitor = try UdevMonitor(context: udev)          // events after udev processed them
/// try monitor.filter(subsystem: "power_supply")
/// try monitor.enableReceiving()
/// // when monitor.fileDescriptor is readable:
/// while case .device(let device) = try monitor.receiveDevice() { … }
/// ```
///
/// When the socket's receive buffer overflowed, the kernel dropped events and `receiveDevice()`
/// returns `.overflow`: the caller should read the state of every device afresh.
/// Not `Sendable`, like every libudev object.
public final class UdevMonitor {
    /// Which netlink group the monitor listens to.
    public enum EventSource: String, Sendable, Hashable {
        /// Events after udevd processed them (rules applied, database written): what applications use.
        case udev
        /// Raw kernel events, before udevd.
        case kernel
    }

    /// The outcome of one `receiveDevice()` call.
    public enum Reception {
        /// A uevent: the device, with its `action` and the properties the event carried.
        case device(UdevDevice)
        /// Nothing is queued now (`EAGAIN`); wait until the descriptor is readable again.
        case wouldBlock
        /// The socket overflowed (`ENOBUFS`) and uevents were lost; re-read every device.
        case overflow
    }

    let pointer: OpaquePointer
    let context: UdevContext
    let faults: UdevFaultInjector?

    /// Creates a monitor. Wraps `udev_monitor_new_from_netlink(udev, "udev")` (or `"kernel"`).
    /// - Parameters:
    ///   - source: the netlink group; `.udev` unless you need raw kernel events.
    /// - Throws: `UdevError` with operation `udev_monitor_new_from_netlink`, e.g. `EACCES` or
    ///   `EPROTONOSUPPORT` where netlink uevent sockets are not allowed (some containers).
    public convenience init(context: UdevContext, source: EventSource = .udev) throws(UdevError) {
        try self.init(context: context, source: source, faults: nil)
    }

    /// Creates a monitor with a test hook: the failures `faults` holds are returned by
    /// `receiveDevice()` as though libudev had reported them (umockdev cannot overflow a socket).
    package init(context: UdevContext, source: EventSource, faults: UdevFaultInjector?) throws(UdevError) {
        clearErrno()
        guard let pointer = udev_monitor_new_from_netlink(context.pointer, source.rawValue) else {
            throw .fromErrno("udev_monitor_new_from_netlink", default: EPROTONOSUPPORT)
        }
        self.pointer = pointer
        self.context = context
        self.faults = faults
    }

    deinit { udev_monitor_unref(pointer) }

    /// Keeps only events of `subsystem` (and `devtype`, when given), filtered in the kernel.
    /// Call before `enableReceiving()`. Wraps `udev_monitor_filter_add_match_subsystem_devtype`.
    public func filter(subsystem: String, devtype: String? = nil) throws(UdevError) {
        let result = udev_monitor_filter_add_match_subsystem_devtype(pointer, subsystem, devtype)
        if result < 0 { throw .fromResult("udev_monitor_filter_add_match_subsystem_devtype", result) }
    }

    /// Binds the socket and installs the filters; events are queued from now on.
    /// Wraps `udev_monitor_enable_receiving`.
    public func enableReceiving() throws(UdevError) {
        let result = udev_monitor_enable_receiving(pointer)
        if result < 0 { throw .fromResult("udev_monitor_enable_receiving", result) }
    }

    /// The socket's file descriptor (non-blocking), to watch for readability. It belongs to the
    /// monitor: do not close it, and stop watching it before the monitor is released.
    /// Wraps `udev_monitor_get_fd`.
    public var fileDescriptor: Int32 { udev_monitor_get_fd(pointer) }

    /// Receives the next queued uevent without blocking. Wraps `udev_monitor_receive_device`.
    ///
    /// Call it until it returns `.wouldBlock` each time the descriptor is readable (or call it a
    /// bounded number of times and let a level-triggered poll call you again).
    /// - Returns: `.device` for a uevent, `.wouldBlock` when none is queued, `.overflow` when the
    ///   socket overflowed (`ENOBUFS`) and events were lost.
    /// - Throws: `UdevError` for any other failure of the socket.
    public func receiveDevice() throws(UdevError) -> Reception {
        if let injected = faults?.takeReceiveFailure() {
            return try reception(forErrno: injected)
        }
        clearErrno()
        if let device = udev_monitor_receive_device(pointer) {
            return .device(UdevDevice(owning: device, context: context))
        }
        return try reception(forErrno: currentErrno())
    }

    private func reception(forErrno code: Int32) throws(UdevError) -> Reception {
        switch code {
        case ENOBUFS: return .overflow
        // libudev also returns NULL, with errno 0 or EAGAIN, for a message it drops (a foreign
        // sender, a malformed or filtered event): nothing to deliver now.
        case 0, EAGAIN, EWOULDBLOCK, EINTR: return .wouldBlock
        default: throw UdevError(operation: "udev_monitor_receive_device", errno: code)
        }
    }
}

@available(*, unavailable, message: "libudev objects are not thread-safe; keep them on one thread")
extension UdevMonitor: Sendable {}
