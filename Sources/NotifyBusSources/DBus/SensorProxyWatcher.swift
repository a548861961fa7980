import DBus
import EpollLoop
import NotifyBus

/// The loop-side part of `SensorProxySource`: carries out what its `SensorProxyStateMachine`
/// decides (D-Bus calls, timers, publishing, status) and feeds it what its `DBusProxy` tells
/// (owner changes with their epoch, properties loaded, changed, failed to load, malformed
/// signals) and the replies to its calls.
final class SensorProxyWatcher: DBusSourceWatcher<SensorProxyConfiguration> {
    static let service: BusName = "net.hadess.SensorProxy"
    static let interface: InterfaceName = "net.hadess.SensorProxy"
    override static var peers: [DBusPeer] {
        [DBusPeer(name: service, path: "/net/hadess/SensorProxy", interface: interface)]
    }

    private typealias StateMachine = SensorProxyStateMachine<() -> Void>

    /// iio-sensor-proxy's owner and epoch, its properties (`GetAll`, `PropertiesChanged`) and its methods.
    private var sensorProxy: DBusProxy { proxies[0] }
    private var state: StateMachine
    private var settleTimers: [SensorProxySensor: LoopTimer] = [:]
    /// The time limit of the re-reads waiting for the source to settle.
    private var settleWaitTimer: LoopTimer?
    /// Ends the stop, once the claims are released.
    private var stopDone: (() -> Void)?

    required init(bus: NotificationBus, configuration: SensorProxyConfiguration, context: LoopContext, hooks: SourceHooks) {
        state = StateMachine(busDescription: "\(configuration.address)", service: Self.service, interface: Self.interface)
        super.init(bus: bus, configuration: configuration, context: context, hooks: hooks)
    }

    /// What the state machine says, at start and as the connection and the service come and go.
    override func start(in context: LoopContext) {
        perform(state.started())
        // Registered after the proxy's own handler: its epoch already counts the loss.
        followConnection()
        sensorProxy.onPropertiesChange { [weak self] event in
            guard let self else { return }
            switch event {
            case .loaded(let properties):
                self.perform(self.state.propertiesLoaded(properties))
            case .changed(let change):
                self.perform(
                    self.state.propertiesChanged(
                        interface: change.interface, changed: change.changed, invalidated: change.invalidated,
                        sender: change.signal.sender))
            case .loadFailed(let error):
                self.perform(self.state.propertiesLoadFailed(error))
            case .malformedSignal(let error):
                self.perform(self.state.malformedSignal(error))
            }
        }
        sensorProxy.onOwnerChange { [weak self] owner in
            guard let self else { return }
            self.perform(self.state.ownerChanged(to: owner, epoch: self.sensorProxy.epoch))
        }
        connection.connect()
    }

    override func disconnected(_ error: DBusError) {
        perform(state.disconnected(error, epoch: sensorProxy.epoch))
    }

    /// Releases the claims, then closes the connection (`releaseAndClose`).
    override func stop(in context: LoopContext, then done: @escaping () -> Void) {
        stopDone = done
        perform(state.stopRequested())
    }

    /// Reads every property again; calls `done` once the source has settled: when the service
    /// came back in the meantime (a restart while the process stood stopped), that is after the
    /// new claims and their first readings, so that what changed is published before `done`
    /// (a CLI flushes on fg right after). At most `settleDelay` + 2 s.
    ///
    /// It starts with a round trip to the bus daemon: its reply is dispatched after every message
    /// that queued up before it (after a stop, the daemon's `NameOwnerChanged`s), so the owner,
    /// and whether the sensors must be claimed again, is current before anything is decided.
    override func reread(then done: @escaping () -> Void) {
        continueReread(state.rereadRequested(), then: done)
    }

    private func continueReread(_ step: StateMachine.RereadStep, then done: @escaping () -> Void) {
        switch step {
        case .finish:
            done()
        case .syncWithBus:
            sensorProxy.syncOwner(timeout: .seconds(2)) { [weak self] in
                guard let self else { return done() }
                self.continueReread(self.state.busSynced(), then: done)
            }
        case .readProperties:
            // The answer reaches the state machine (`propertiesLoaded`) before this completion.
            sensorProxy.reloadProperties { [weak self] in
                guard let self else { return done() }
                self.perform(self.state.waitUntilSettled(done))
            }
        }
    }

    // MARK: Carrying out actions

    /// Carries out `actions` in order, each run of consecutive `publish` actions (the readings
    /// of one signal or read) as one batch.
    private func perform(_ actions: [StateMachine.Action]) {
        var batch: [(key: String, value: JSONValue)] = []
        for action in actions {
            if case .publish(let key, let value) = action {
                batch.append((key, value))
                continue
            }
            if !batch.isEmpty {
                bus.publishSourceValues(batch, problem: problem)
                batch.removeAll()
            }
            perform(action)
        }
        if !batch.isEmpty { bus.publishSourceValues(batch, problem: problem) }
    }

    private func perform(_ action: StateMachine.Action) {
        switch action {
        case .reportStatus(let status):
            report(status)
        case .reportProblem(let message):
            problem(message)
        case .publish(let key, let value):
            bus.publishSourceValue(key, value, problem: problem)
        case .readProperties:
            sensorProxy.reloadProperties()
        case .claim(let sensor, let epoch):
            sensorProxy.call(sensor.claimMember) { [weak self] result in
                guard let self else { return }
                let error: DBusError?
                switch result {
                case .success: error = nil
                case .failure(let failure): error = failure
                }
                self.perform(self.state.claimReplied(sensor, epoch: epoch, error: error))
            }
        case .startSettleTimer(let sensor):
            if let timer = settleTimers[sensor] { context.cancelTimer(timer) }
            settleTimers[sensor] = context.scheduleTimer(after: configuration.settleDelay) { [weak self] in
                guard let self else { return }
                self.settleTimers[sensor] = nil
                self.perform(self.state.settleTimerFired(sensor))
            }
        case .cancelSettleTimer(let sensor):
            if let timer = settleTimers.removeValue(forKey: sensor) { context.cancelTimer(timer) }
        case .startSettleWaitTimer:
            if let timer = settleWaitTimer { context.cancelTimer(timer) }
            settleWaitTimer = context.scheduleTimer(after: configuration.settleDelay + .seconds(2)) { [weak self] in
                guard let self else { return }
                self.settleWaitTimer = nil
                self.perform(self.state.settleWaitTimerFired())
            }
        case .cancelSettleWaitTimer:
            if let timer = settleWaitTimer { context.cancelTimer(timer) }
            settleWaitTimer = nil
        case .finishWaiters(let waiters):
            for waiter in waiters { waiter() }
        case .releaseAndClose(let sensors):
            let done = stopDone ?? {}
            stopDone = nil
            let countdown = Countdown(sensors.count) { [connection, sensorProxy] in
                sensorProxy.close()
                connection.close()
                done()
            }
            for sensor in sensors {
                sensorProxy.call(sensor.releaseMember, timeout: .seconds(1)) { _ in countdown.signal() }
            }
        }
    }
}
