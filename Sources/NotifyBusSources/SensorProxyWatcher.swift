import DBus
import EpollLoop
import NotifyBus

/// The loop-side part of `SensorProxySource`: its D-Bus connection, claims and readings.
final class SensorProxyWatcher: ConfiguredWatcher {
    static let service: BusName = "net.hadess.SensorProxy"
    static let path: ObjectPath = "/net/hadess/SensorProxy"
    static let interface: InterfaceName = "net.hadess.SensorProxy"

    enum Sensor: CaseIterable {
        case accelerometer, light, proximity

        var hasProperty: String {
            switch self {
            case .accelerometer: "HasAccelerometer"
            case .light: "HasAmbientLight"
            case .proximity: "HasProximity"
            }
        }

        var method: String {
            switch self {
            case .accelerometer: "Accelerometer"
            case .light: "Light"
            case .proximity: "Proximity"
            }
        }

        var claimMember: MemberName {
            switch self {
            case .accelerometer: "ClaimAccelerometer"
            case .light: "ClaimLight"
            case .proximity: "ClaimProximity"
            }
        }

        var releaseMember: MemberName {
            switch self {
            case .accelerometer: "ReleaseAccelerometer"
            case .light: "ReleaseLight"
            case .proximity: "ReleaseProximity"
            }
        }

        var readings: [String] {
            switch self {
            case .accelerometer: ["AccelerometerOrientation"]
            case .light: ["LightLevel", "LightLevelUnit"]
            case .proximity: ["ProximityNear"]
            }
        }
    }

    private let bus: NotificationBus
    private let configuration: SensorProxySource.Configuration
    private unowned let context: LoopContext
    private let report: (SourceStatus) -> Void
    private let problem: (String) -> Void
    private let connection: DBusConnection

    /// The service's current owner; `nil` when absent.
    private var owner: BusName?
    /// Whether the bus has told us the owner (none included) since we connected: a first
    /// "no owner" must be reported too, though it equals the `nil` we start with.
    private var ownerKnown = false
    /// Bumped at every owner change, so replies for an earlier owner are ignored.
    private var epoch = 0
    private var has: [Sensor: Bool] = [:]
    /// Whether the current owner's properties were read (`has` is known).
    private var readOwner = false
    private var claiming: Set<Sensor> = []
    private var claimed: Set<Sensor> = []
    /// Sensors whose readings are trusted (a reading arrived after the claim, or it settled).
    private var settled: Set<Sensor> = []
    private var settleTimers: [Sensor: LoopTimer] = [:]
    /// Sensors whose claim failed: nothing to wait for.
    private var unclaimable: Set<Sensor> = []
    private var lightLevel: Double?
    private var lightUnit: String?
    private var stopped = false
    /// Re-reads waiting for the source to settle (see `reread`), and their time limit.
    private var settleWaiters: [() -> Void] = []
    private var settleWaitTimer: LoopTimer?

    init(
        bus: NotificationBus, configuration: SensorProxySource.Configuration, context: LoopContext,
        report: @escaping (SourceStatus) -> Void, problem: @escaping (String) -> Void
    ) {
        self.bus = bus
        self.configuration = configuration
        self.context = context
        self.report = report
        self.problem = problem
        connection = DBusConnection(address: configuration.address, context: context, configuration: configuration.connection)
    }

    func start(in context: LoopContext) {
        setStatus(.starting(reason: "connecting to the \(configuration.address)"))
        connection.onStateChange { [weak self] state in
            guard let self else { return }
            if case .disconnected(let error) = state {
                self.forgetService()
                self.ownerKnown = false
                self.setStatus(.unavailable(reason: "\(self.configuration.address) unreachable: \(error)"))
            }
        }
        connection.propertiesChanges(sender: Self.service, path: Self.path, interface: Self.interface) {
            [weak self] result in
            switch result {
            case .success(let change): self?.changed(change)
            case .failure(let error): self?.problem("unexpected signal: \(error)")
            }
        }
        connection.nameOwners(of: Self.service) { [weak self] owner in self?.ownerChanged(owner) }
        connection.connect()
    }

    func stop(in context: LoopContext, then done: @escaping () -> Void) {
        stopped = true
        finishSettleWaiters()
        for timer in settleTimers.values { context.cancelTimer(timer) }
        settleTimers = [:]
        let toRelease = owner == nil ? [] : Sensor.allCases.filter { claimed.contains($0) || claiming.contains($0) }
        let countdown = Countdown(toRelease.count) { [connection] in
            connection.close()
            done()
        }
        for sensor in toRelease {
            connection.call(
                destination: Self.service, path: Self.path, interface: Self.interface,
                member: sensor.releaseMember, timeout: .seconds(1)
            ) { _ in countdown.signal() }
        }
    }

    /// Reads every property again; calls `done` once the source has settled: when the service
    /// came back in the meantime (a restart while the process was stopped), that is after the
    /// new claims and their first readings, so that what changed is published before `done`
    /// (a CLI flushes on fg right after). At most `settleDelay` + 2 s.
    ///
    /// It starts with a round trip to the bus daemon: its reply is dispatched after every message
    /// that queued up before it (after a stop, the daemon's `NameOwnerChanged`s), so the owner,
    /// and whether the sensors must be claimed again, is current before anything is decided.
    func reread(then done: @escaping () -> Void) {
        guard !stopped else { return done() }
        connection.call(
            destination: .bus, path: .bus, interface: .bus,
            member: "GetNameOwner", arguments: [.string(Self.service.rawValue)], timeout: .seconds(2)
        ) { [weak self] _ in
            guard let self, self.owner != nil, !self.stopped else { return done() }
            self.readAll(then: { [weak self] in
                guard let self else { return done() }
                self.whenSettled(done)
            })
        }
    }

    /// Whether the state is published: the service is absent, or every sensor it has has its
    /// first trusted reading (or could not be claimed).
    private var isSettled: Bool {
        guard owner != nil else { return true }
        guard readOwner else { return false }
        return Sensor.allCases.filter { has[$0] == true }.allSatisfy { settled.contains($0) || unclaimable.contains($0) }
    }

    private func whenSettled(_ done: @escaping () -> Void) {
        guard !stopped, !isSettled else { return done() }
        settleWaiters.append(done)
        if settleWaitTimer == nil {
            settleWaitTimer = context.scheduleTimer(after: configuration.settleDelay + .seconds(2)) { [weak self] in
                self?.settleWaitTimer = nil
                self?.finishSettleWaiters()
            }
        }
    }

    private func finishSettleWaiters() {
        if let timer = settleWaitTimer { context.cancelTimer(timer) }
        settleWaitTimer = nil
        let waiters = settleWaiters
        settleWaiters = []
        for waiter in waiters { waiter() }
    }

    /// Reports `status`; a settled one (running, unavailable) ends the re-reads waiting for it.
    private func setStatus(_ status: SourceStatus) {
        report(status)
        if status.isSettled { finishSettleWaiters() }
    }

    // MARK: The service

    private func forgetService() {
        owner = nil
        epoch += 1
        has = [:]
        readOwner = false
        claiming = []
        claimed = []
        settled = []
        unclaimable = []
        for timer in settleTimers.values { context.cancelTimer(timer) }
        settleTimers = [:]
    }

    private func ownerChanged(_ newOwner: BusName?) {
        guard !stopped, !ownerKnown || newOwner != owner else { return }
        ownerKnown = true
        forgetService()
        owner = newOwner
        guard newOwner != nil else {
            setStatus(.unavailable(reason: "iio-sensor-proxy (\(Self.service)) is not running"))
            return
        }
        readAll(then: {})
    }

    private func readAll(then done: @escaping () -> Void) {
        let epoch = self.epoch
        connection.getAllProperties(destination: Self.service, path: Self.path, interface: Self.interface) {
            [weak self] result in
            defer { done() }
            guard let self, self.epoch == epoch, !self.stopped else { return }
            switch result {
            case .success(let properties):
                self.readOwner = true
                self.apply(properties, trusted: false)
                self.updateStatus()
            case .failure(let error):
                self.problem("GetAll(\(Self.interface)) failed: \(error)")
                self.setStatus(.unavailable(reason: "cannot read \(Self.service): \(error)"))
            }
        }
    }

    /// Running once every sensor present has its first trusted reading published (or could
    /// not be claimed); starting until then, so that "running" means "the state is published".
    private func updateStatus() {
        guard owner != nil else { return }
        let present = Sensor.allCases.filter { has[$0] == true }
        if present.isEmpty {
            setStatus(.unavailable(reason: "iio-sensor-proxy reports no sensors"))
        } else if present.allSatisfy({ settled.contains($0) || unclaimable.contains($0) }) {
            setStatus(.running)
        } else {
            setStatus(.starting(reason: "claiming sensors"))
        }
    }

    private func changed(_ change: DBusPropertiesChange) {
        guard !stopped, owner != nil, change.interface == Self.interface else { return }
        apply(change.changed, trusted: true)
        if !change.invalidated.isEmpty { readAll(then: {}) }
        updateStatus()
    }

    // MARK: Claims

    private func claim(_ sensor: Sensor) {
        guard !claiming.contains(sensor), !claimed.contains(sensor), owner != nil else { return }
        claiming.insert(sensor)
        let epoch = self.epoch
        connection.call(
            destination: Self.service, path: Self.path, interface: Self.interface, member: sensor.claimMember
        ) { [weak self] result in
            guard let self, self.epoch == epoch, !self.stopped else { return }
            self.claiming.remove(sensor)
            switch result {
            case .success:
                guard self.has[sensor] == true else { return }
                self.claimed.insert(sensor)
                self.scheduleSettle(sensor)
            case .failure(let error):
                self.problem("Claim\(sensor.method) failed: \(error)")
                self.unclaimable.insert(sensor)
                self.updateStatus()
            }
        }
    }

    private func scheduleSettle(_ sensor: Sensor) {
        if let timer = settleTimers[sensor] { context.cancelTimer(timer) }
        settleTimers[sensor] = context.scheduleTimer(after: configuration.settleDelay) { [weak self] in
            guard let self else { return }
            self.settleTimers[sensor] = nil
            self.settled.insert(sensor)
            self.readAll(then: {})
        }
    }

    // MARK: Properties

    /// Applies properties from `GetAll` (`trusted` false) or a signal (`trusted` true).
    private func apply(_ properties: [String: DBusValue], trusted: Bool) {
        for sensor in Sensor.allCases {
            guard let value = properties[sensor.hasProperty] else { continue }
            guard case .boolean(let present) = value else {
                wrongType(sensor.hasProperty, value, expected: "b")
                continue
            }
            let had = has[sensor] ?? false
            has[sensor] = present
            if present {
                claim(sensor)
            } else if had {
                sensorRemoved(sensor)
            }
        }
        // Light's unit is kept from any read, so a reading of the level alone can be published.
        if let value = properties["LightLevelUnit"] {
            if case .string(let unit) = value, unit == "lux" || unit == "vendor" {
                lightUnit = unit
            } else {
                wrongType("LightLevelUnit", value, expected: "s ('lux' or 'vendor')")
            }
        }
        for sensor in Sensor.allCases where has[sensor] == true && claimed.contains(sensor) {
            guard sensor.readings.contains(where: { properties[$0] != nil }) else { continue }
            if trusted, !settled.contains(sensor) {
                // The first reading after the claim: the value is live from now on.
                settled.insert(sensor)
                if let timer = settleTimers.removeValue(forKey: sensor) { context.cancelTimer(timer) }
            }
            guard settled.contains(sensor) else { continue }
            publishReadings(of: sensor, from: properties)
        }
    }

    private func publishReadings(of sensor: Sensor, from properties: [String: DBusValue]) {
        switch sensor {
        case .accelerometer:
            guard let value = properties["AccelerometerOrientation"] else { return }
            guard case .string(let raw) = value else {
                wrongType("AccelerometerOrientation", value, expected: "s")
                return
            }
            guard let orientation = SensorProxySource.orientation(for: raw) else {
                problem("AccelerometerOrientation has an unknown value '\(raw)'; skipped")
                return
            }
            bus.publishIfChanged("orientation", .string(orientation))
        case .proximity:
            guard let value = properties["ProximityNear"] else { return }
            guard case .boolean(let near) = value else {
                wrongType("ProximityNear", value, expected: "b")
                return
            }
            bus.publishIfChanged("proximity", .bool(near))
        case .light:
            if let value = properties["LightLevel"] {
                guard case .double(let level) = value, level.isFinite else {
                    wrongType("LightLevel", value, expected: "d")
                    return
                }
                lightLevel = level
            }
            guard let level = lightLevel else { return }
            let unit = lightUnit ?? "lux"
            bus.publishIfChanged("light", .object(["level": .number(level), "unit": .string(unit)]))
        }
    }

    private func sensorRemoved(_ sensor: Sensor) {
        claimed.remove(sensor)
        claiming.remove(sensor)
        settled.remove(sensor)
        if let timer = settleTimers.removeValue(forKey: sensor) { context.cancelTimer(timer) }
        switch sensor {
        case .accelerometer: bus.publishIfChanged("orientation", "unknown")
        case .proximity: bus.publishIfChanged("proximity", .null)
        case .light:
            lightLevel = nil
            bus.publishIfChanged("light", .null)
        }
    }

    private func wrongType(_ property: String, _ value: DBusValue, expected: String) {
        problem("\(property) has type '\(value.signature)' (\(value)), expected '\(expected)'; skipped")
    }
}
