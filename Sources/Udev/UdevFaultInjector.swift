import Synchronization

/// Failures to inject at the libudev boundary, for tests of the paths real hardware rarely takes.
///
/// umockdev cannot overflow a netlink socket, so a test that wants to see `ENOBUFS` handled
/// gives a monitor an injector and calls `failNextReceive(errno: ENOBUFS)`: the monitor's next
/// `receiveDevice()` then returns `.overflow` (as `udev_monitor_receive_device` returning `NULL`
/// with `errno == ENOBUFS` would) without touching the socket. The monitor's descriptor must
/// still become readable for its owner to call `receiveDevice()`, so send some uevent afterwards.
///
/// Thread-safe: arm it from any thread. A test hook, so not part of the module's public API.
package final class UdevFaultInjector: Sendable {
    private let pendingReceiveFailures = Mutex<[Int32]>([])

    /// Creates an injector with nothing armed.
    package init() {}

    /// Makes one later `UdevMonitor.receiveDevice()` fail with `errno` (several calls queue up).
    package func failNextReceive(errno: Int32) {
        pendingReceiveFailures.withLock { $0.append(errno) }
    }

    /// The next armed failure, removing it; `nil` when none is armed.
    func takeReceiveFailure() -> Int32? {
        pendingReceiveFailures.withLock { $0.isEmpty ? nil : $0.removeFirst() }
    }
}
