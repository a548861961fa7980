import DBus
import NotifyBus

/// A client of iio-sensor-proxy as a plain state: what is known of the service's owner, and
/// where each sensor's claim stands. Every event returns the actions to carry out, in order;
/// `SensorProxyWatcher` carries them out (D-Bus calls, timers, publishing, status) and feeds
/// its `DBusProxy`'s events and the replies back as events. No bus, no timer and no thread of
/// its own: tests drive it directly.
///
/// The owner and its epoch come from the proxy (`DBusProxy.owner`, `DBusProxy.epoch`), which
/// also reads every new owner's properties (`propertiesLoaded(_:)`) and drops the `GetAll`
/// answers of a former owner.
///
/// `Waiter` is what a re-read leaves to be called once the state is published (a closure in the
/// watcher); it comes back in `Action.finishWaiters`.
///
/// The rules it keeps:
/// - Readings are trusted only once a sensor is claimed: before its first poll, the daemon
///   reports defaults (`undefined`, `false`, `0`). A claimed sensor is `settling` until a
///   reading arrives in a signal or its settle timer fires (then its value is read with `GetAll`);
///   only `live` sensors publish.
/// - Signals count only from the service's current owner; claim replies only for the current
///   epoch, which every owner change and every disconnection bumps.
/// - A new owner (a restart, the bus back) is read and its sensors claimed again; a sensor that
///   turns present (plugged in) is claimed, one that turns absent is reset.
/// - A failed claim leaves the sensor `unclaimable`: nothing to wait for. The next read that
///   lists the sensor claims it again, and the sensor still counts as published meanwhile.
struct SensorProxyStateMachine<Waiter> {
    /// Where one sensor's claim stands.
    enum SensorState: Hashable, Sendable {
        /// The service does not have it, or the service is not there.
        case absent
        /// `Claim…` is on its way. `afterFailure`: an earlier claim failed, so it is not waited for.
        case claiming(afterFailure: Bool)
        /// Claimed; its readings are not trusted until one arrives or the settle timer fires.
        case settling(afterFailure: Bool)
        /// Claimed and trusted: its readings are published.
        case live
        /// Its claim failed.
        case unclaimable
    }

    /// What is known of the owner of the service's name.
    enum Owner: Hashable, Sendable {
        /// Not told since connecting.
        case unknown
        /// The name has no owner.
        case absent
        /// Owned by the unique name `name`; `propertiesRead` once a `GetAll` of this owner answered.
        case present(name: BusName, propertiesRead: Bool)
    }

    /// What the watcher does, in the order given.
    enum Action {
        /// Report the source's status.
        case reportStatus(SourceStatus)
        /// Report something skipped or failed.
        case reportProblem(String)
        /// Publish `value` under `key` if it differs from the bus's current one.
        case publish(key: String, value: JSONValue)
        /// Read every property again (`GetAll`); answer with `propertiesLoaded(_:)` or
        /// `propertiesLoadFailed(_:)`.
        case readProperties
        /// Call `Claim…`; answer with `claimReplied(_:epoch:error:)`.
        case claim(SensorProxySensor, epoch: UInt64)
        /// Start (or restart) the sensor's settle timer; answer with `settleTimerFired(_:)`.
        case startSettleTimer(SensorProxySensor)
        /// Cancel the sensor's settle timer.
        case cancelSettleTimer(SensorProxySensor)
        /// Start the time limit of the re-reads waiting to settle; answer with `settleWaitTimerFired()`.
        case startSettleWaitTimer
        /// Cancel the time limit of the re-reads waiting to settle.
        case cancelSettleWaitTimer
        /// Call these waiters: the state is published, or their time is up.
        case finishWaiters([Waiter])
        /// Call `Release…` for each sensor, then close the connection and end the stop.
        case releaseAndClose([SensorProxySensor])
    }

    /// The next step of a re-read.
    enum RereadStep: Hashable, Sendable {
        /// Done: call the re-read's completion.
        case finish
        /// Make a round trip to the bus daemon, so that every message queued before it (an owner
        /// change while the process stood stopped) is handled; then call `busSynced()`.
        case syncWithBus
        /// Read every property again; once its answer is applied (`propertiesLoaded(_:)` or
        /// `propertiesLoadFailed(_:)`), call `waitUntilSettled(_:)`.
        case readProperties
    }

    /// What is known of the service's owner.
    private(set) var owner: Owner = .unknown
    /// The proxy's epoch as last told (bumped at every owner change and disconnection): claim
    /// replies for an earlier one are ignored.
    private(set) var epoch: UInt64 = 0
    /// Whether the source is stopping: signals, owner changes and replies are ignored.
    private(set) var isStopped = false
    private var sensors: [SensorProxySensor: SensorState] = [:]
    /// The last trusted light level (`nil` until one, and once the sensor is removed); it
    /// goes out with `lightUnit`. Set by `apply(_:trusted:into:)`.
    var lightLevel: Double?
    /// The last unit read (`lux` or `vendor`), from any read: a level alone is published with it.
    var lightUnit: String?
    /// Re-reads waiting for the state to be published; their time limit runs while there are any.
    private var settleWaiters: [Waiter] = []

    /// How the bus is named in statuses (`system bus`).
    let busDescription: String
    /// The service's well-known name, for statuses.
    let service: BusName
    /// The service's interface: signals for another one are ignored.
    let interface: InterfaceName

    init(busDescription: String, service: BusName, interface: InterfaceName) {
        self.busDescription = busDescription
        self.service = service
        self.interface = interface
    }

    /// Where `sensor`'s claim stands.
    func state(of sensor: SensorProxySensor) -> SensorState { sensors[sensor] ?? .absent }

    /// Whether the state is published: the service is absent, or every sensor it has has its
    /// first trusted reading published (or could not be claimed).
    var isSettled: Bool {
        switch owner {
        case .unknown, .absent: true
        case .present(_, propertiesRead: false): false
        case .present(_, propertiesRead: true): presentSensors.allSatisfy { state(of: $0).isPublished }
        }
    }

    var presentSensors: [SensorProxySensor] { SensorProxySensor.allCases.filter { state(of: $0) != .absent } }

    // MARK: The connection and the owner

    /// The watcher starts connecting.
    func started() -> [Action] {
        [.reportStatus(.starting(reason: "connecting to the \(busDescription)"))]
    }

    /// The connection to the bus is lost: the owner is unknown until the bus tells it again.
    /// `epoch` is the proxy's, which counted the loss.
    mutating func disconnected(_ error: DBusError, epoch: UInt64) -> [Action] {
        var actions = forgetService(epoch: epoch)
        owner = .unknown
        report(.unavailable(reason: "\(busDescription) unreachable: \(error)"), into: &actions)
        return actions
    }

    /// The bus told the service's owner (`nil`: none), at connection or at a change; `epoch` is
    /// the proxy's for this owner. The proxy reads a new owner's properties by itself: they come
    /// as `propertiesLoaded(_:)`.
    mutating func ownerChanged(to newOwner: BusName?, epoch: UInt64) -> [Action] {
        guard !isStopped else { return [] }
        switch (owner, newOwner) {
        case (.absent, nil): return []
        case (.present(let name, _), let newOwner?) where name == newOwner: return []
        default: break
        }
        var actions = forgetService(epoch: epoch)
        guard let newOwner else {
            owner = .absent
            report(.unavailable(reason: "iio-sensor-proxy (\(service)) is not running"), into: &actions)
            return actions
        }
        owner = .present(name: newOwner, propertiesRead: false)
        return actions
    }

    /// Forgets the service's sensors and takes the proxy's `epoch`; the caller sets the owner.
    private mutating func forgetService(epoch: UInt64) -> [Action] {
        self.epoch = epoch
        let settling = SensorProxySensor.allCases.filter { state(of: $0).isSettling }
        sensors = [:]
        return settling.map { .cancelSettleTimer($0) }
    }

    // MARK: Properties

    /// A `GetAll` of the current owner answered (`DBusProxy.PropertiesEvent.loaded`): a new
    /// owner's first read, or the answer to `Action.readProperties`.
    mutating func propertiesLoaded(_ properties: [String: DBusValue]) -> [Action] {
        guard !isStopped, case .present(let name, _) = owner else { return [] }
        var actions: [Action] = []
        owner = .present(name: name, propertiesRead: true)
        apply(properties, trusted: false, into: &actions)
        updateStatus(into: &actions)
        return actions
    }

    /// A `GetAll` of the current owner failed (`DBusProxy.PropertiesEvent.loadFailed`).
    mutating func propertiesLoadFailed(_ error: DBusError) -> [Action] {
        guard !isStopped, case .present = owner else { return [] }
        var actions: [Action] = [.reportProblem("GetAll(\(interface)) failed: \(error)")]
        report(.unavailable(reason: "cannot read \(service): \(error)"), into: &actions)
        return actions
    }

    /// A `PropertiesChanged` signal, broadcast or unicast to us, from `sender`
    /// (`DBusProxy.PropertiesEvent.changed`).
    mutating func propertiesChanged(
        interface: InterfaceName, changed: [String: DBusValue], invalidated: [String], sender: BusName
    ) -> [Action] {
        guard !isStopped, case .present(let name, _) = owner, sender == name, interface == self.interface else {
            return []
        }
        var actions: [Action] = []
        apply(changed, trusted: true, into: &actions)
        if !invalidated.isEmpty { actions.append(.readProperties) }
        updateStatus(into: &actions)
        return actions
    }

    /// A `PropertiesChanged` signal whose arguments are not `(s, a{sv}, as)`
    /// (`DBusProxy.PropertiesEvent.malformedSignal`): reported and skipped.
    func malformedSignal(_ error: DBusError) -> [Action] {
        [.reportProblem("unexpected signal: \(error)")]
    }

    // MARK: Claims

    /// Claims `sensor` unless a claim is on its way or held.
    mutating func claim(_ sensor: SensorProxySensor, into actions: inout [Action]) {
        guard case .present = owner else { return }
        switch state(of: sensor) {
        case .absent: sensors[sensor] = .claiming(afterFailure: false)
        case .unclaimable: sensors[sensor] = .claiming(afterFailure: true)
        case .claiming, .settling, .live: return
        }
        actions.append(.claim(sensor, epoch: epoch))
    }

    /// The answer to `Action.claim(_:epoch:)`: `error` is `nil` when it succeeded.
    mutating func claimReplied(_ sensor: SensorProxySensor, epoch: UInt64, error: DBusError?) -> [Action] {
        guard epoch == self.epoch, !isStopped else { return [] }
        let claiming: Bool?
        if case .claiming(let afterFailure) = state(of: sensor) { claiming = afterFailure } else { claiming = nil }
        guard let error else {
            guard let afterFailure = claiming else { return [] }
            sensors[sensor] = .settling(afterFailure: afterFailure)
            return [.startSettleTimer(sensor)]
        }
        var actions: [Action] = [.reportProblem("\(sensor.claimMember) failed: \(error)")]
        if claiming != nil { sensors[sensor] = .unclaimable }
        updateStatus(into: &actions)
        return actions
    }

    /// No reading arrived since the claim: the sensor's value is trusted, and read.
    mutating func settleTimerFired(_ sensor: SensorProxySensor) -> [Action] {
        guard !isStopped, state(of: sensor).isSettling else { return [] }
        sensors[sensor] = .live
        return [.readProperties]
    }

    /// Marks a settling sensor live: a reading arrived after its claim.
    mutating func trust(_ sensor: SensorProxySensor, into actions: inout [Action]) {
        guard state(of: sensor).isSettling else { return }
        sensors[sensor] = .live
        actions.append(.cancelSettleTimer(sensor))
    }

    /// Forgets a sensor the service no longer has.
    mutating func forget(_ sensor: SensorProxySensor, into actions: inout [Action]) {
        if state(of: sensor).isSettling { actions.append(.cancelSettleTimer(sensor)) }
        sensors[sensor] = .absent
    }

    // MARK: Status

    /// Running once every sensor present is published (or could not be claimed); starting until
    /// then, so that "running" means "the state is published".
    private mutating func updateStatus(into actions: inout [Action]) {
        guard case .present = owner else { return }
        let present = presentSensors
        if present.isEmpty {
            report(.unavailable(reason: "iio-sensor-proxy reports no sensors"), into: &actions)
        } else if present.allSatisfy({ state(of: $0).isPublished }) {
            report(.running, into: &actions)
        } else {
            report(.starting(reason: "claiming sensors"), into: &actions)
        }
    }

    /// Reports `status`; a settled one (running, unavailable) ends the re-reads waiting for it.
    private mutating func report(_ status: SourceStatus, into actions: inout [Action]) {
        actions.append(.reportStatus(status))
        if status.isSettled { finishWaiters(into: &actions) }
    }

    private mutating func finishWaiters(into actions: inout [Action]) {
        guard !settleWaiters.isEmpty else { return }
        actions.append(.cancelSettleWaitTimer)
        actions.append(.finishWaiters(settleWaiters))
        settleWaiters = []
    }

    // MARK: Re-reads and stop

    /// A re-read is asked for.
    func rereadRequested() -> RereadStep {
        isStopped ? .finish : .syncWithBus
    }

    /// The round trip of `RereadStep.syncWithBus` came back: the owner is current.
    func busSynced() -> RereadStep {
        guard !isStopped, case .present = owner else { return .finish }
        return .readProperties
    }

    /// The re-read's properties were applied: `waiter` is finished once the state is published,
    /// or when the time limit fires.
    mutating func waitUntilSettled(_ waiter: Waiter) -> [Action] {
        guard !isStopped, !isSettled else { return [.finishWaiters([waiter])] }
        settleWaiters.append(waiter)
        return settleWaiters.count == 1 ? [.startSettleWaitTimer] : []
    }

    /// The time limit of the waiting re-reads is up.
    mutating func settleWaitTimerFired() -> [Action] {
        guard !settleWaiters.isEmpty else { return [] }
        defer { settleWaiters = [] }
        return [.finishWaiters(settleWaiters)]
    }

    /// The source stops: waiting re-reads finish, timers stop, claims held or on their way are released.
    mutating func stopRequested() -> [Action] {
        isStopped = true
        var actions: [Action] = []
        finishWaiters(into: &actions)
        let sensors = SensorProxySensor.allCases
        actions += sensors.filter { state(of: $0).isSettling }.map { .cancelSettleTimer($0) }
        let claimed: [SensorProxySensor]
        if case .present = owner { claimed = sensors.filter { state(of: $0).holdsClaim } } else { claimed = [] }
        actions.append(.releaseAndClose(claimed))
        return actions
    }
}

extension SensorProxyStateMachine.SensorState {
    /// Whether nothing is waited for: its readings are trusted, or its claim failed.
    var isPublished: Bool {
        switch self {
        case .live, .unclaimable, .claiming(afterFailure: true), .settling(afterFailure: true): true
        case .absent, .claiming(afterFailure: false), .settling(afterFailure: false): false
        }
    }

    var isSettling: Bool {
        if case .settling = self { return true }
        return false
    }

    /// Whether a claim is held or on its way (released at stop).
    var holdsClaim: Bool {
        switch self {
        case .claiming, .settling, .live: true
        case .absent, .unclaimable: false
        }
    }
}

extension SensorProxyStateMachine.Action: Equatable where Waiter: Equatable {}
