import DBus
import EpollLoop
import NotifyBus
import SystemSupport

#if canImport(Glibc)
import Glibc
#endif

/// The loop-side part of `TimeSource`.
final class TimeWatcher: DBusSourceWatcher<TimeConfiguration> {
    static let service: BusName = "org.freedesktop.timedate1"
    override static var peers: [DBusPeer] {
        [DBusPeer(name: service, path: "/org/freedesktop/timedate1", interface: "org.freedesktop.timedate1", followsDepartures: false)]
    }

    /// timedated's owner and `Timezone`.
    private var timedated: DBusProxy { proxies[0] }
    private var alarm: (any WallClockAlarm)?
    private var alarmRegistration: IORegistration?
    /// What timedated said last: names the zone when the link does not.
    private var timedatedZone: String?

    /// Running from the start: the link is the truth, with or without timedated and the bus.
    override func start(in context: LoopContext) {
        do {
            let alarm = try configuration.clock.makeAlarm()
            self.alarm = alarm
            alarmRegistration = try context.register(fileDescriptor: alarm.fileDescriptor, interest: .readable) { [weak self] _ in
                self?.alarmReady()
            }
        } catch {
            problem("cannot watch the clock: \(error); midnight, transitions and clock changes are not followed")
        }
        watchFiles([configuration.localtime], naming: configuration.localtime, in: context) { [weak self] in self?.refresh() }
        followConnection()
        timedated.onPropertiesChange { [weak self] event in self?.propertiesEvent(event) }
        refresh()
        report(.running)
        connection.connect()
    }

    /// Activates timedated when it is not running; its answer prompts a re-read.
    override func connected() {
        timedated.reloadProperties()
    }

    /// Without the bus the link is still the truth: the source stays running.
    override func disconnected(_ error: DBusError) {}

    override func release(in context: LoopContext) {
        if let alarmRegistration { context.deregister(alarmRegistration) }
        alarmRegistration = nil
        alarm?.close()
        alarm = nil
    }

    override func reread(then done: @escaping () -> Void) {
        refresh()
        done()
    }

    private func alarmReady() {
        guard !stopped, let alarm else { return }
        do {
            // Fired (midnight, a transition) or the clock was set: either way, evaluate again.
            if try alarm.read() != .none { refresh() }
        } catch {
            problem("reading the clock alarm failed: \(error)")
            if let alarmRegistration { context.deregister(alarmRegistration) }
            alarmRegistration = nil
        }
    }

    /// timedated's `Timezone` is remembered (it names a zone the link does not name); any
    /// news from it prompts a re-read of the link.
    private func propertiesEvent(_ event: DBusProxy.PropertiesEvent) {
        guard !stopped else { return }
        switch event {
        case .loaded(let properties):
            if let value = properties["Timezone"] { remember(value) }
            refresh()
        case .changed(let change):
            if let value = change.changed["Timezone"] { remember(value) }
            refresh()
        case .loadFailed:
            // timedated is absent or not activatable here: the link is the truth anyway.
            break
        case .malformedSignal(let error):
            problem("unexpected signal: \(error)", peer: Self.service.description)
        }
    }

    private func remember(_ value: DBusValue) {
        guard case .string(let zone) = value else {
            problem("Timezone has type '\(value.signature)' (\(value)), expected 's'; skipped", key: "time/zone")
            return
        }
        timedatedZone = zone.isEmpty ? nil : zone
    }

    /// Reads the zone, publishes the three keys, and arms the alarm for the next local midnight
    /// or change of offset. A clock set between the read and the arming makes the arming fail
    /// (`ECANCELED`): then it reads and evaluates again.
    private func refresh() {
        guard !stopped else { return }
        for _ in 0..<3 {
            let deadline = evaluate()
            guard let alarm else { return }
            do {
                try alarm.arm(at: deadline)
                return
            } catch {
                _ = try? alarm.read()
            }
        }
        problem("cannot arm the clock alarm")
    }

    /// Publishes the zone, offset and date now; returns when to evaluate again.
    private func evaluate() -> Int64 {
        let (zone, rules) = currentZone()
        let now = configuration.clock.now()
        var values: [(key: String, value: JSONValue)] = []
        if let zone { values.append(("time/zone", .string(zone))) }
        values.append(("time/utc-offset", .integer(Int64(rules.offset(at: now)))))
        values.append(("time/date", .string(rules.localDate(at: now))))
        bus.publishSourceValues(values, problem: problem)
        return min(rules.nextMidnight(after: now), rules.nextTransition(after: now) ?? .max)
    }

    /// The zone's name (when known) and its rules.
    private func currentZone() -> (name: String?, rules: TimeZoneRules) {
        let path = configuration.localtime
        switch readLink(path) {
        case .missing:
            return ("UTC", .utc)
        case .target(let target):
            if let name = TimeSource.zoneName(fromLinkTarget: target) {
                return (name, rules(name: name))
            }
            return (timedatedZone, rules(file: path))
        case .notALink:
            return (timedatedZone, rules(file: path))
        }
    }

    private func rules(name: String) -> TimeZoneRules {
        do {
            return try TimeZoneRules(contentsOfFile: configuration.zoneinfo + "/" + name)
        } catch {
            problem("zone \(name): \(error); taken as UTC", key: "time/utc-offset")
            return .utc
        }
    }

    private func rules(file path: String) -> TimeZoneRules {
        do {
            return try TimeZoneRules(contentsOfFile: path)
        } catch {
            problem("\(error); taken as UTC", key: "time/utc-offset")
            return .utc
        }
    }

    private enum LinkTarget {
        case target(String)
        case missing
        case notALink
    }

    /// The target of the link at `path`, one level. Wraps `readlink`.
    private func readLink(_ path: String) -> LinkTarget {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink(path, &buffer, buffer.count)
        guard count >= 0 else { return errno == ENOENT ? .missing : .notALink }
        return .target(String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
}
