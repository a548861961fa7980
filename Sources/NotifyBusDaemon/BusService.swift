import DBus
import EpollLoop
import Logging
import NotifyBus
import NotifyBusProtocol

/// `notifybusd`'s D-Bus side (CONTRACT.md §5): the bus object and the subscriptions' subtree on
/// a connection, the subscriptions' life, and their events sent to their owners.
///
/// Lives on the loop thread of its connection. Its decisions about who owns what and what is
/// suspended are `SubscriptionTable`'s; this type carries them out: it makes and cancels the bus
/// subscriptions (the subtree's objects are the live ones), follows each owner (its leaving the
/// bus, its process's life through `ProcessLifeWatcher`), and sends each batch of a
/// subscription's events as one unicast `Events` signal.
///
/// One event's path: a source publishes → the subscription's batch handler (on the publishing
/// thread) queues the batch on this loop → `send` checks the owner can run → one `Events` signal.
final class BusService {
    /// Where the service is kept on its loop, so the batch handlers find it.
    static let key = LoopLocalKey<BusService>()

    struct Live {
        let subscription: Subscription
        let path: ObjectPath
    }

    struct Follower {
        var ownerWatch: DBusConnection.Token?
        var life: ProcessLifeWatcher.Token?
        var budget: HoldBudget
    }

    let connection: DBusConnection
    let bus: NotificationBus
    let loop: EventLoopThread
    let logger: Logger
    let life: ProcessLifeWatcher?
    /// The wall-clock time of the bus's t = 0.
    let origin: WallTime
    let globalBudget: HoldBudget
    var table = SubscriptionTable()
    var live: [UInt64: Live] = [:]
    var followers: [BusName: Follower] = [:]
    /// Each source's status, in the order given.
    var sources: [(name: String, status: String, reason: String)] = []
    /// The last `Events` signal marshalled and the events it carries: one change reaches every
    /// subscription of the same keys as the same events, so it is marshalled once and copied for
    /// each (the signal is a function of the events and `origin` alone).
    var lastSignal: (events: [SubscriptionEvent], signal: DBusPreparedSignal)?

    init(
        connection: DBusConnection, bus: NotificationBus, loop: EventLoopThread, life: ProcessLifeWatcher?,
        maximumHeld: Int, logger: Logger
    ) {
        self.connection = connection
        self.bus = bus
        self.loop = loop
        self.life = life
        self.logger = logger
        self.origin = WallTime.now().advanced(by: .zero - bus.clock.now())
        self.globalBudget = bus.makeHoldBudget(limit: maximumHeld)
    }

    /// Exports the bus object and the subscriptions' subtree; logs match rules the bus refuses.
    func start() throws(DBusError) {
        try connection.export(busObject())
        try connection.export(subscriptionSubtree())
        connection.onMatchRuleFailure { [logger] rule, error in
            logger.warning("the bus refused a match rule", metadata: ["rule": "\(rule)", "error": "\(error)"])
        }
    }

    /// Cancels every subscription and takes every object away.
    func stop() {
        for owner in Array(followers.keys) { perform(table.ownerLeft(owner)) }
        connection.unexport(BusInterface.path)
        connection.unexportSubtree(at: BusInterface.subscriptionPrefix)
    }

    /// A source's status changed (or is known for the first time).
    func setSource(_ name: String, status: String, reason: String) {
        if let index = sources.firstIndex(where: { $0.name == name }) {
            guard sources[index] != (name, status, reason) else { return }
            sources[index] = (name, status, reason)
        } else {
            sources.append((name, status, reason))
        }
        try? connection.emitPropertiesChanged(path: BusInterface.path, interface: BusInterface.interface, names: ["Sources"])
    }

    // MARK: Carrying out the table's actions

    /// Carries out `actions`; `request` is what a `create` among them makes (only `Subscribe`'s
    /// actions have one).
    func perform(_ actions: [SubscriptionTable.Action], request: SubscribeRequest? = nil) {
        for action in actions {
            switch action {
            case .create(let number): if let request { create(number, request) }
            case .suspend(let number): live[number]?.subscription.suspend()
            case .resume(let number): live[number]?.subscription.resume()
            case .remove(let number): remove(number)
            case .follow(let owner): follow(owner)
            case .forget(let owner): forget(owner)
            }
        }
    }

    private func create(_ number: UInt64, _ request: SubscribeRequest) {
        guard let entry = table.entries[number] else { return }
        let path = BusInterface.subscriptionPath(number)
        let loop = self.loop
        let subscription = bus.subscribeInBatches(
            request.patterns, policy: request.policy, limit: request.limit, budget: followers[entry.owner]?.budget,
            initial: request.initial, name: path.rawValue
        ) { events in
            // On the publishing thread: hand the batch to the loop, whole and in order.
            try? loop.execute { context in context[local: BusService.key]?.send(events, of: number) }
        }
        live[number] = Live(subscription: subscription, path: path)
    }

    private func remove(_ number: UInt64) {
        guard let removed = live.removeValue(forKey: number) else { return }
        removed.subscription.cancel()
    }

    /// Follows `owner`: its leaving the bus, and (once its process ID is known) its process's life.
    private func follow(_ owner: BusName) {
        let budget = bus.makeHoldBudget(limit: BusInterface.Limits.heldPerConnection, parent: globalBudget)
        followers[owner] = Follower(budget: budget)
        let watch = connection.nameOwners(of: owner) { [weak self] current in
            guard current == nil, let self else { return }
            self.perform(self.table.ownerLeft(owner))
        }
        followers[owner]?.ownerWatch = watch
        guard let life else { return }
        connection.processID(of: owner) { [weak self] result in
            guard let self, self.followers[owner] != nil, case .success(let pid) = result, let pid32 = Int32(exactly: pid)
            else { return }
            let token = life.follow(pid: pid32) { [weak self] canRun in
                guard let self else { return }
                self.perform(self.table.ownerLife(owner, canRun: canRun))
            }
            if self.followers[owner] != nil {
                self.followers[owner]?.life = token
            } else {
                life.unfollow(token)
            }
        }
    }

    private func forget(_ owner: BusName) {
        guard let follower = followers.removeValue(forKey: owner) else { return }
        if let watch = follower.ownerWatch { connection.cancel(watch) }
        if let token = follower.life { life?.unfollow(token) }
    }

    // MARK: Events

    /// Sends one batch of subscription `number`'s events to its owner as one `Events` signal.
    /// When the owner's process has just stopped, the batch still goes (it waits in the bus's
    /// queue), and the subscription is suspended after it.
    func send(_ events: [SubscriptionEvent], of number: UInt64) {
        guard !events.isEmpty, let entry = table.entries[number], let path = live[number]?.path else { return }
        do {
            let signal: DBusPreparedSignal
            if let last = lastSignal, last.events == events {
                signal = last.signal
            } else {
                signal = try DBusPreparedSignal(
                    path: path, interface: BusInterface.subscriptionInterface, member: BusInterface.eventsSignal,
                    arguments: [EventElements.signalArgument(events, origin: origin)], destination: entry.owner)
                lastSignal = (events, signal)
            }
            try connection.emitSignal(signal, path: path, destination: entry.owner)
        } catch {
            logger.warning("could not send events", metadata: ["peer": "\(entry.owner)", "error": "\(error)"])
        }
        if entry.followsLife, !entry.isSuspended, let token = followers[entry.owner]?.life, let life {
            life.check(token)
        }
    }
}
