import DBus
import EpollLoop
import NotifyBus
import Udev

/// The loop-side part of `ThermalSource`: the `thermal` zones through a `UdevSubsystemMonitor`,
/// power-profiles-daemon through one proxy per name (the new one preferred), and a
/// `ThermalStateMachine` that says what to publish and when.
final class ThermalWatcher: DBusSourceWatcher<ThermalConfiguration> {
    override static var peers: [DBusPeer] { PowerProfileWatcher.peers }
    static let key = "thermal/state"

    private var state = ThermalStateMachine()
    private var zones: UdevSubsystemMonitor?
    private var rereadTimer: LoopTimer?
    /// Why the zones were skipped, by name, so that a re-read does not log it again.
    private var skipped: [String: String] = [:]

    override func start(in context: LoopContext) {
        super.start(in: context)
        do {
            zones = try UdevSubsystemMonitor(subsystem: "thermal", context: context) { [weak self] event in
                self?.zoneEvent(event)
            }
        } catch {
            // A container without udev, say: power-profiles-daemon still counts.
            problem.note("thermal zones are not followed: \(error.status)")
        }
        readZones()
    }

    override func watch(in context: LoopContext) {
        for proxy in proxies {
            proxy.onOwnerChange { [weak self] _ in self?.ownersChanged() }
            proxy.onPropertiesChange { [weak self, unowned proxy] event in self?.propertiesEvent(event, from: proxy) }
        }
    }

    /// Without the bus, power-profiles-daemon does not count; the zones still do.
    override func disconnected(_ error: DBusError) {
        perform(state.daemonChanged(.absent))
    }

    override func release(in context: LoopContext) {
        zones?.stop(in: context)
        zones = nil
        if let rereadTimer { context.cancelTimer(rereadTimer) }
        rereadTimer = nil
    }

    override func reread(then done: @escaping () -> Void) {
        guard !stopped else { return done() }
        readZones()
        guard canRead, let proxy = proxies.preferredServed else { return done() }
        proxy.reloadProperties(then: done)
    }

    // MARK: Zones

    /// Reads every zone (a zone whose values cannot be read counts as present, at no level).
    private func readZones() {
        guard !stopped else { return }
        var found: [String: ThermalLevel?] = [:]
        if let zones {
            do {
                for device in try zones.scan() where Self.isZone(device) {
                    found[device.sysname] = .some(level(of: device))
                }
            } catch {
                problem("cannot list thermal zones: \(error)")
                return
            }
        }
        skipped = skipped.filter { found[$0.key] != nil }
        perform(state.zonesRead(found))
    }

    private func zoneEvent(_ event: UdevSubsystemMonitor.Event) {
        guard !stopped else { return }
        switch event {
        case .uevent(let device):
            guard Self.isZone(device) else { return }
            if device.action == "remove" {
                skipped[device.sysname] = nil
                perform(state.zoneRemoved(device.sysname))
            } else {
                perform(state.zoneRead(device.sysname, level(of: device)))
            }
        case .overflow:
            readZones()
        case .failed(let reason):
            problem("thermal zones are no longer followed: \(reason)")
            zones = nil
        }
    }

    /// Zones are `thermal_zone<N>`; the subsystem's cooling devices do not count.
    private static func isZone(_ device: UdevDevice) -> Bool {
        device.sysname.hasPrefix("thermal_zone")
    }

    /// The zone's level; `nil` (logged once, until the reason changes: at `debug` for a `temp`
    /// that cannot be read, which some zones do as a matter of course) when it cannot be read.
    private func level(of device: UdevDevice) -> ThermalLevel? {
        do {
            let level = try ThermalZoneReading(name: device.sysname, attribute: device.sysattr).level
            skipped[device.sysname] = nil
            return level
        } catch {
            if skipped.updateValue(error.description, forKey: device.sysname) != error.description {
                let message = "skipped thermal zone \(device.sysname): \(error)"
                if error == .unreadable { problem.note(message) } else { problem(message) }
            }
            return nil
        }
    }

    // MARK: power-profiles-daemon

    private func ownersChanged() {
        guard !stopped, proxies.ownersKnown || proxies.preferredServed != nil else { return }
        guard let proxy = proxies.preferredServed else { return perform(state.daemonChanged(.absent)) }
        // A name that just got its owner is being read (its answer comes as `loaded`).
        if !proxy.properties.isEmpty { apply(proxy.properties, from: proxy) }
    }

    private func propertiesEvent(_ event: DBusProxy.PropertiesEvent, from proxy: DBusProxy) {
        guard !stopped, proxy === proxies.preferredServed else { return }
        switch event {
        case .loaded, .changed:
            if let properties = proxy.properties(following: "PerformanceDegraded", in: event) { apply(properties, from: proxy) }
        case .loadFailed(let error):
            if error.name == DBusError.Name.ownerChanged { return }
            problem("reading \(proxy.destination) failed: \(error)", peer: proxy.destination.rawValue)
            perform(state.daemonChanged(.absent))
        case .malformedSignal(let error):
            problem("unexpected signal: \(error)", peer: proxy.destination.rawValue)
        }
    }

    /// `PerformanceDegraded` as the daemon says it; a daemon without it is not degraded.
    private func apply(_ properties: [String: DBusValue], from proxy: DBusProxy) {
        var reasons = ""
        if let value = properties["PerformanceDegraded"] {
            if case .string(let text) = value {
                reasons = text
            } else {
                problem(
                    "PerformanceDegraded has type '\(value.signature)' (\(value)), expected 's'; taken as not degraded",
                    key: Self.key, peer: proxy.destination.rawValue)
            }
        }
        perform(state.daemonChanged(.degraded(reasons)))
    }

    // MARK: Actions

    private func perform(_ actions: [ThermalStateMachine.Action]) {
        for action in actions {
            switch action {
            case .publish(let level):
                bus.publishSourceValue(Self.key, .string(level.description), problem: problem)
            case .reportRunning:
                report(.running)
            case .startRereadTimer:
                let interval = configuration.rereadInterval
                rereadTimer = context.scheduleTimer(after: interval, repeating: interval) { [weak self] in self?.readZones() }
            case .stopRereadTimer:
                if let rereadTimer { context.cancelTimer(rereadTimer) }
                rereadTimer = nil
            }
        }
    }
}
