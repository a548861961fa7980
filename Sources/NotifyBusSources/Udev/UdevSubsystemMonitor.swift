import EpollLoop
import Udev

/// libudev's view of one subsystem on a loop: a monitor of its uevents, registered on the loop,
/// and scans of its devices. What the devices mean is its owner's (`UdevSubsystemWatcher` for the
/// power and display sources, `ThermalWatcher`). Made, used and released on one loop thread.
final class UdevSubsystemMonitor {
    /// What the monitor tells its owner, on the loop thread.
    enum Event {
        /// A uevent of the subsystem (`add`, `change`, `remove`, …).
        case uevent(UdevDevice)
        /// The socket overflowed (`ENOBUFS`): uevents were lost, read everything again.
        case overflow
        /// The socket broke: the monitor stopped watching it (the reason says why).
        case failed(String)
    }

    /// Why the monitor could not start: the status its source takes.
    struct StartFailure: Error {
        let status: SourceStatus
    }

    /// The subsystem watched, e.g. `thermal`.
    let subsystem: String
    private let udev: UdevContext
    private var monitor: UdevMonitor?
    private var registration: IORegistration?
    private let onEvent: (Event) -> Void

    /// Starts receiving the subsystem's uevents (the monitor first, so nothing falls between a
    /// scan and the watch), calling `onEvent` for each.
    /// - Throws: `StartFailure` with the status its source takes: `failed` when libudev cannot be
    ///   used or the monitor cannot be watched, `unavailable` when udev's events cannot be
    ///   received (no access).
    init(
        subsystem: String, faults: UdevFaultInjector? = nil, context: LoopContext, onEvent: @escaping (Event) -> Void
    ) throws(StartFailure) {
        self.subsystem = subsystem
        self.onEvent = onEvent
        do {
            udev = try UdevContext()
        } catch {
            throw StartFailure(status: .failed(reason: "cannot use libudev: \(error)"))
        }
        do {
            let monitor = try UdevMonitor(context: udev, source: .udev, faults: faults)
            try monitor.filter(subsystem: subsystem)
            try monitor.enableReceiving()
            registration = try context.register(fileDescriptor: monitor.fileDescriptor, interest: .readable) {
                // The context calls this itself, so it is alive; the monitor may be gone.
                [weak self, unowned context] _ in self?.receive(in: context)
            }
            self.monitor = monitor
        } catch let error as UdevError {
            throw StartFailure(status: .unavailable(reason: "no access to udev events: \(error)"))
        } catch {
            throw StartFailure(status: .failed(reason: "cannot watch the udev monitor: \(error)"))
        }
    }

    /// Every device of the subsystem now. Wraps libudev's enumeration.
    func scan() throws(UdevError) -> [UdevDevice] {
        let enumerator = try UdevEnumerator(context: udev)
        try enumerator.matchSubsystem(subsystem)
        return try enumerator.scanDevices()
    }

    /// Stops watching the monitor and releases it.
    func stop(in context: LoopContext) {
        if let registration { context.deregister(registration) }
        registration = nil
        monitor = nil
    }

    /// Receives what is queued on the monitor (a bounded batch; epoll calls again if more is left).
    private func receive(in context: LoopContext) {
        for _ in 0..<128 {
            guard let monitor else { return }
            let reception: UdevMonitor.Reception
            do {
                reception = try monitor.receiveDevice()
            } catch {
                // The socket is broken: stop watching it, or epoll would call us forever.
                stop(in: context)
                onEvent(.failed("udev monitor: \(error)"))
                return
            }
            switch reception {
            case .wouldBlock: return
            case .overflow: onEvent(.overflow)
            case .device(let device): onEvent(.uevent(device))
            }
        }
    }
}
