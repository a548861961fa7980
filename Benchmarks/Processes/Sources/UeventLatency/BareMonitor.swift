import Harness
import NotifyBusSources
import Synchronization
import Udev

#if canImport(Glibc)
import Glibc
#endif

/// The anchor: a bare libudev monitor on a thread of its own, blocking in `poll(2)` on the
/// monitor's socket, as a minimal libudev client would.
///
/// For every `power_supply` uevent it records when `udev_monitor_receive_device` returned the
/// device (`.bare`, or `.control` for the extra monitor of a control run) and, unless it is the
/// control, when it has also read the device into a `PowerSupplyReading` with the same lookup the
/// source uses (`.bareParsed`): the fairer anchor, since the bus path must parse too.
final class BareMonitor: Sendable {
    /// What the thread and its owner share.
    private final class Shared: Sendable {
        /// 0 starting, 1 receiving, -1 failed.
        let status = Atomic<Int>(0)
        /// The monitor's socket, once it receives.
        let fileDescriptor = Atomic<Int32>(-1)
        let failure = Mutex<String?>(nil)
    }

    private let shared = Shared()
    private let thread: pthread_t
    /// The write end of a pipe whose readability tells the thread to stop.
    private let stopWrite: Int32
    private let stopRead: Int32

    /// The monitor's socket number: its emulated socket is `$UMOCKDEV_DIR/event<n>`.
    var fileDescriptor: Int32 { shared.fileDescriptor.load(ordering: .acquiring) }

    /// Starts the thread and returns once its monitor receives.
    init(recorder: Recorder, role: Receiver) throws(BenchmarkError) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw BenchmarkError("pipe: errno \(errno)") }
        stopRead = fds[0]
        stopWrite = fds[1]
        let shared = self.shared
        let stopRead = self.stopRead
        let body = ThreadBody {
            Self.run(shared: shared, stopRead: stopRead, recorder: recorder, role: role)
        }
        thread = try body.start()
        while shared.status.load(ordering: .acquiring) == 0 { usleep(1000) }
        if shared.status.load(ordering: .acquiring) < 0 {
            let reason = shared.failure.withLock { $0 } ?? "?"
            stop()
            throw BenchmarkError("bare monitor: \(reason)")
        }
    }

    /// Stops the thread (it releases its monitor) and waits for it.
    func stop() {
        var byte: UInt8 = 1
        _ = write(stopWrite, &byte, 1)
        pthread_join(thread, nil)
        close(stopWrite)
        close(stopRead)
    }

    private static func run(shared: Shared, stopRead: Int32, recorder: Recorder, role: Receiver) {
        let monitor: UdevMonitor
        do {
            let udev = try UdevContext()
            monitor = try UdevMonitor(context: udev, source: .udev)
            try monitor.filter(subsystem: "power_supply")
            try monitor.enableReceiving()
        } catch {
            shared.failure.withLock { $0 = "\(error)" }
            shared.status.store(-1, ordering: .releasing)
            return
        }
        shared.fileDescriptor.store(monitor.fileDescriptor, ordering: .releasing)
        shared.status.store(1, ordering: .releasing)

        var fds = [
            pollfd(fd: monitor.fileDescriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: stopRead, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            let ready = poll(&fds, 2, -1)
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 || fds[1].revents != 0 { return }
            guard fds[0].revents != 0 else { continue }
            receiving: while true {
                let reception: UdevMonitor.Reception
                do {
                    reception = try monitor.receiveDevice()
                } catch {
                    return
                }
                switch reception {
                case .wouldBlock:
                    break receiving
                case .overflow:
                    continue
                case .device(let device):
                    let received = UInt64(monotonicNanoseconds())
                    guard device.subsystem == "power_supply", device.action == "change" else { continue }
                    if role == .control {
                        recorder.record(.control, at: received, state: nil)
                        continue
                    }
                    // What the source does with the device: its properties, else its sysfs attributes.
                    let reading = PowerSupplyReading(name: device.sysname) { property, attribute in
                        device.property(property) ?? device.sysattr(attribute)
                    }
                    let parsed = UInt64(monotonicNanoseconds())
                    recorder.record(.bare, at: received, state: nil)
                    recorder.record(.bareParsed, at: parsed, state: reading?.state ?? "")
                }
            }
        }
    }
}

/// A closure run by a new pthread, boxed to pass through `pthread_create`'s `void *`.
final class ThreadBody: Sendable {
    private let body: @Sendable () -> Void

    init(_ body: @escaping @Sendable () -> Void) { self.body = body }

    /// Starts a thread that runs the body.
    func start() throws(BenchmarkError) -> pthread_t {
        let argument = Unmanaged.passRetained(self).toOpaque()
        var handle = pthread_t()
        let result = pthread_create(&handle, nil, { argument in
            if let argument { Unmanaged<ThreadBody>.fromOpaque(argument).takeRetainedValue().body() }
            return nil
        }, argument)
        guard result == 0 else {
            Unmanaged<ThreadBody>.fromOpaque(argument).release()
            throw BenchmarkError("pthread_create: errno \(result)")
        }
        return handle
    }
}

/// What went wrong, in words.
struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
