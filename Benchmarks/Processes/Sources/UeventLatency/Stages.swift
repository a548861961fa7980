import Harness
import NotifyBus
import NotifyBusSources
import Synchronization
import Udev

#if canImport(Glibc)
import Glibc
#endif

/// `--stages`: where the time of the bus path goes, without threads or wake-ups.
///
/// On this thread: a monitor of its own; for each uevent (status flipped as in the run) the
/// sender queues the message on the socket, then this thread times, one after the other, what
/// the power source's udev watcher does with it: `udev_monitor_receive_device`;
/// `PowerSupplyReading` of the device (properties, else sysfs attributes); its `values`;
/// `publishIfChanged` of each value up to the subscriber's callback (which runs on this thread)
/// and back.
@MainActor
func measureStages(testbed: Testbed, battery: String, count: Int) throws -> String {
    let udev = try UdevContext()
    let monitor = try UdevMonitor(context: udev, source: .udev)
    try monitor.filter(subsystem: "power_supply")
    try monitor.enableReceiving()
    let bus = NotificationBus()
    let calledAt = Atomic<UInt64>(0)
    let subscription = bus.subscribe(["battery/BAT0/state"]) { _ in
        calledAt.store(UInt64(monotonicNanoseconds()), ordering: .relaxed)
    }
    defer { subscription.cancel() }

    var receive: [Double] = [], parse: [Double] = [], values: [Double] = []
    var toCallback: [Double] = [], publishAll: [Double] = []
    for index in 0..<count {
        let status = index % 2 == 0 ? "Charging" : "Discharging"
        testbed.setAttribute(battery, "status", status)
        testbed.setProperty(battery, "POWER_SUPPLY_STATUS", status)
        testbed.uevent(battery, action: "change")
        var fds = [pollfd(fd: monitor.fileDescriptor, events: Int16(POLLIN), revents: 0)]
        _ = poll(&fds, 1, 1000)

        let t0 = UInt64(monotonicNanoseconds())
        guard case .device(let device) = try monitor.receiveDevice() else { continue }
        let t1 = UInt64(monotonicNanoseconds())
        guard device.subsystem == "power_supply", device.action == "change",
              let reading = PowerSupplyReading(name: device.sysname, lookup: { property, attribute in
                  device.property(property) ?? device.sysattr(attribute)
              })
        else { continue }
        let t2 = UInt64(monotonicNanoseconds())
        let pairs = reading.values
        let t3 = UInt64(monotonicNanoseconds())
        for (key, value) in pairs { bus.publishIfChanged(key, value) }
        let t4 = UInt64(monotonicNanoseconds())
        let t3c = calledAt.load(ordering: .relaxed)
        if index < 50 { continue }  // warm-up
        receive.append(Double(t1 - t0) / 1000)
        parse.append(Double(t2 - t1) / 1000)
        values.append(Double(t3 - t2) / 1000)
        toCallback.append(Double(t3c &- t3) / 1000)
        publishAll.append(Double(t4 - t3) / 1000)
    }
    func cell(_ values: [Double]) -> String {
        let sorted = values.sorted()
        return "\(format(Report.p50(sorted), 2)) µs | \(format(Report.p90(sorted), 2)) µs"
    }
    return """
        | stage (one thread, no wake-ups; \(receive.count) uevents) | p50 | p90 |
        |---|---:|---:|
        | `udev_monitor_receive_device` (message queued already) | \(cell(receive)) |
        | `PowerSupplyReading` of the device (properties, else sysfs attributes) | \(cell(parse)) |
        | its `values` (keys and JSON values) | \(cell(values)) |
        | `publishIfChanged` of the state, up to the callback | \(cell(toCallback)) |
        | `publishIfChanged` of state and level, in all | \(cell(publishAll)) |
        """
}
