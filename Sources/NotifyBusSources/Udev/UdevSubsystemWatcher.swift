import EpollLoop
import NotifyBus
import Udev

/// The working part of a udev source (`PowerSupplySource`, `DisplaySource`): watches one
/// subsystem, owns the libudev objects and lives on the loop thread. What each device means is
/// `Reading`'s (`PowerSupplyReading`, `BacklightReading`).
///
/// - At start: the monitor first (so nothing falls between the scan and the watch), then a scan
///   of every device of the subsystem.
/// - `add` and `change` uevents read that device; `remove` publishes `null` for each of its keys.
/// - A full re-read (timer, monitor overflow `ENOBUFS`, `reread()`) reads every device again and
///   publishes `null` for the keys of devices that vanished unannounced.
/// - The re-read timer runs while there is a device to re-read (one published or skipped), and
///   only then: with none, an idle source has nothing to wake for.
/// - Every publication goes through `publishIfChanged`; a device whose values are unusable is
///   skipped and the reason logged (once, until it changes).
///
/// Created, used and released only inside jobs and handlers of one `EventLoopThread`, where it
/// is kept in the loop's storage (`LoopContext[local:]`); it is not `Sendable` and never leaves
/// that thread, which is what keeps the libudev objects it owns on one thread.
final class UdevSubsystemWatcher<Reading: UdevDeviceReading>: ConfiguredWatcher {
    private let bus: NotificationBus
    private let configuration: UdevSourceConfiguration<Reading>
    private let report: (SourceStatus) -> Void
    private let problem: SourceProblems
    private unowned let context: LoopContext

    private var monitor: UdevSubsystemMonitor?
    private var timer: LoopTimer?
    /// The keys published for each device, by name, in publishing order.
    private var devices: [String: [String]] = [:]
    /// The reason each skipped device is skipped for, by name, so that a re-read does not log it again.
    private var skipped: [String: String] = [:]
    /// Why the source cannot watch (no access to udev, a failed socket); sticks once set.
    private var watchProblem: SourceStatus?
    /// Why the last scan failed, until one succeeds.
    private var scanProblem: String?

    /// How many times the state was read in full (start, timer, overflow, `reread()`).
    private(set) var fullReads = 0
    /// How many socket overflows were seen.
    private(set) var overflows = 0

    init(bus: NotificationBus, configuration: UdevSourceConfiguration<Reading>, context: LoopContext, hooks: SourceHooks) {
        self.bus = bus
        self.configuration = configuration
        report = hooks.report
        problem = hooks.problem
        self.context = context
    }

    /// Starts watching: monitor first (so nothing falls between the scan and the watch), then
    /// the scan that publishes the current values (and starts the re-read timer if it found a device).
    func start(in context: LoopContext) {
        do {
            #if DEBUG
            let faults = configuration.faults
            #else
            let faults: UdevFaultInjector? = nil
            #endif
            monitor = try UdevSubsystemMonitor(subsystem: Reading.subsystem, faults: faults, context: context) {
                [weak self] event in self?.handle(event)
            }
        } catch {
            watchProblem = error.status
            updateStatus()
            return
        }
        rereadAll()
    }

    /// Stops watching and releases the libudev objects, then calls `done`. Published values stay.
    func stop(in context: LoopContext, then done: @escaping () -> Void) {
        stop(in: context)
        done()
    }

    /// Reads every device again (see `rereadAll`), then calls `done`.
    func reread(then done: @escaping () -> Void) {
        rereadAll()
        done()
    }

    /// Stops watching and releases the libudev objects. Published values stay in the store.
    func stop(in context: LoopContext) {
        monitor?.stop(in: context)
        if let timer { context.cancelTimer(timer) }
        timer = nil
        monitor = nil
    }

    // MARK: Reading

    /// Scans every device of the subsystem, publishes what differs from the store, and publishes
    /// `null` for the keys of devices that are gone.
    func rereadAll() {
        guard let monitor else { return }
        fullReads += 1
        let found: [UdevDevice]
        do {
            found = try monitor.scan()
            scanProblem = nil
        } catch {
            scanProblem = "cannot list \(Reading.subsystem) devices: \(error)"
            updateStatus()
            return
        }
        var seen: Set<String> = []
        for device in found {
            seen.insert(device.sysname)
            apply(device)
        }
        for name in Set(devices.keys).union(skipped.keys).sorted() where !seen.contains(name) {
            deviceWentAway(name)
        }
        scheduleRereads()
        updateStatus()
    }

    /// Starts the re-read timer when there is a device to re-read (published, or skipped until
    /// its values can be used) and stops it when there is none.
    private func scheduleRereads() {
        guard monitor != nil, let interval = configuration.rereadInterval, interval > .zero else { return }
        let wanted = !devices.isEmpty || !skipped.isEmpty
        if wanted, timer == nil {
            timer = context.scheduleTimer(after: interval, repeating: interval) { [weak self] in
                self?.rereadAll()
            }
        } else if !wanted, let timer {
            context.cancelTimer(timer)
            self.timer = nil
        }
    }

    /// What the monitor says: a uevent, lost uevents (read everything again; only differences are
    /// published), or a broken socket.
    private func handle(_ event: UdevSubsystemMonitor.Event) {
        switch event {
        case .uevent(let device):
            handle(uevent: device)
        case .overflow:
            overflows += 1
            rereadAll()
        case .failed(let reason):
            watchProblem = .failed(reason: reason)
            updateStatus()
        }
    }

    private func handle(uevent device: UdevDevice) {
        guard device.subsystem == Reading.subsystem else { return }
        if device.action == "remove" {
            deviceWentAway(device.sysname)
        } else {
            apply(device)
        }
        scheduleRereads()
        updateStatus()
    }

    /// Publishes a device's values (those that differ from the store) and remembers its keys.
    private func apply(_ device: UdevDevice) {
        let name = device.sysname
        guard !name.isEmpty else { return }
        let values: [(key: String, value: JSONValue)]
        switch Reading.values(of: device) {
        case .ignored:
            return
        case .skipped(let reason):
            if skipped.updateValue(reason, forKey: name) != reason {
                problem("skipped \(Reading.subsystem) device \(name): \(reason)")
            }
            return
        case .values(let read):
            skipped[name] = nil
            values = read
        }
        var keys = devices[name] ?? []
        bus.publishSourceValues(values, problem: problem)
        for (key, _) in values where !keys.contains(key) { keys.append(key) }
        devices[name] = keys
    }

    /// The device went away: each of its keys gets `null`.
    private func deviceWentAway(_ name: String) {
        skipped[name] = nil
        guard let keys = devices.removeValue(forKey: name) else { return }
        bus.publishSourceValues(keys.map { ($0, .null) }, problem: problem)
    }

    private func updateStatus() {
        if let watchProblem {
            report(watchProblem)
        } else if let scanProblem {
            report(.unavailable(reason: scanProblem))
        } else if devices.isEmpty {
            report(Reading.statusWithoutDevices)
        } else {
            report(.running)
        }
    }
}
