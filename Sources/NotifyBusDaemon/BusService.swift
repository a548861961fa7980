import DBus
import EpollLoop
import Logging
import NotifyBus
import NotifyBusProtocol
import SystemSupport

/// `notifybusd`'s D-Bus side: the bus object and the subscriptions' objects, the subscriptions'
/// life, and their events sent to their owners.
///
/// Lives on the loop thread of its connection. Its decisions about who owns what, within which
/// bounds, and what is suspended are `SubscriptionTable`'s; this type carries them out: it asks
/// the bus who a caller is, makes and cancels the bus subscriptions, follows each owner (its
/// leaving the bus, its process's life through `ProcessLifeWatcher`), answers the calls that
/// waited, and sends each subscription's events as unicast `Events` signals. `Subscribe` and
/// `Snapshot`, whose patterns are parsed and matched against every key, wait in a backlog
/// (`CallBacklog`) worked through in slices between the loop's rounds, so that the cheap calls
/// read behind a burst of them (another client's `Get`) are answered first.
///
/// One event's path: a source publishes → the subscription says it has events ready (on the
/// publishing thread) → on this loop, `deliver` checks the owner's process can run (a stop is
/// noticed here, and the events are then held, not sent) → it takes the events from the bus →
/// numbered `Events` signals of at most 1 MiB.
final class BusService {
    /// Where the service is kept on its loop, so the subscriptions' ready callbacks find it.
    static let key = LoopLocalKey<BusService>()

    /// A subscription on the bus and what sending its events needs.
    struct Live {
        let subscription: Subscription
        let owner: BusName
        /// The `seq` of its next element.
        var nextSeq: UInt64 = 1
    }

    /// An owner being followed: its process's life, and the budget of what its subscriptions hold.
    struct Follower {
        let application: ApplicationID
        let budget: HoldBudget
        var life: ProcessLifeWatcher.Token?
    }

    /// The budget an application's connections share, and how many of them use it.
    struct Application {
        let budget: HoldBudget
        var owners: Int
    }

    let connection: DBusConnection
    let bus: NotificationBus
    let loop: EventLoopThread
    unowned let context: LoopContext
    let logger: Logger
    let life: ProcessLifeWatcher?
    /// The wall-clock time of the bus's t = 0.
    let origin: WallTime
    let globalBudget: HoldBudget
    var table: SubscriptionTable
    var live: [UInt64: Live] = [:]
    var followers: [BusName: Follower] = [:]
    var applications: [ApplicationID: Application] = [:]
    /// Calls answered later (a `Subscribe` waiting for its owner to be identified), by number.
    var calls: [UInt64: DBusMethodCall] = [:]
    var nextCall: UInt64 = 1
    /// The handler of peers leaving the bus.
    var leaving: DBusConnection.Token?
    /// Each source's status, in the order given.
    var sources: [(name: String, status: String, reason: String)] = []
    /// Whether the heap is to be trimmed at the end of this round of the loop.
    var trimScheduled = false
    /// `Subscribe` and `Snapshot` calls waiting for their patterns to be parsed and matched, so
    /// that the cheap calls read behind a burst of them are answered first.
    var backlog = CallBacklog<Backlogged>()
    /// More interfaces of the bus object (the lifecycle's background tasks).
    let interfaces: [DBusInterface]

    init(
        connection: DBusConnection, bus: NotificationBus, loop: EventLoopThread, context: LoopContext,
        life: ProcessLifeWatcher?, bounds: SubscriptionTable.Bounds, maximumHeld: Int, logger: Logger,
        interfaces: [DBusInterface] = []
    ) {
        self.interfaces = interfaces
        self.connection = connection
        self.bus = bus
        self.loop = loop
        self.context = context
        self.life = life
        self.logger = logger
        self.table = SubscriptionTable(bounds: bounds)
        self.origin = WallTime.now().advanced(by: .zero - bus.clock.now())
        self.globalBudget = bus.makeHoldBudget(limit: maximumHeld)
    }

    /// Exports the bus object and the subscriptions' subtree, starts following the peers that
    /// leave the bus (one match rule for all), and logs match rules the bus refuses; the rule
    /// that follows owners is asked for again a second later until the bus takes it, since
    /// without it no owner that leaves would be seen.
    func start() throws(DBusError) {
        try connection.export(busObject())
        try connection.export(subscriptionSubtree())
        followLeavingPeers()
        connection.onMatchRuleFailure { [weak self, logger] rule, error in
            logger.warning("the bus refused a match rule", metadata: ["rule": "\(rule)", "error": "\(error)"])
            guard rule == DBusConnection.peersLeavingRule, let self else { return }
            _ = self.context.scheduleTimer(after: .seconds(1)) { [weak self] in self?.followLeavingPeers() }
        }
    }

    /// Follows the peers that leave the bus, through one match rule (asked for again if it was).
    private func followLeavingPeers() {
        if let leaving { connection.cancel(leaving) }
        leaving = connection.peersLeaving { [weak self] name in
            guard let self, self.table.owners[name] != nil else { return }
            self.perform(self.table.ownerLeft(name))
        }
    }

    /// Cancels every subscription and takes every object away.
    func stop() {
        dropBacklog()
        for owner in Array(table.owners.keys) { perform(table.ownerLeft(owner)) }
        if let leaving { connection.cancel(leaving) }
        leaving = nil
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

    /// What the service keeps now, for tests of what clients leave behind.
    var census: NotifyBusDaemon.Census {
        NotifyBusDaemon.Census(
            subscriptions: live.count, owners: table.owners.count, followings: life?.followingCount ?? 0,
            applications: applications.count, waitingCalls: calls.count, busSubscribers: bus.subscriberCount,
            routes: bus.routeCount, matchRules: connection.matchRuleCount)
    }

    // MARK: Carrying out the table's actions

    /// Carries out `actions`, in order.
    func perform(_ actions: [SubscriptionTable.Action]) {
        for action in actions {
            switch action {
            case .identify(let owner): identify(owner)
            case .follow(let owner, let identity): follow(owner, identity)
            case .forget(let owner): forget(owner)
            case .create(let number, let request, let call): create(number, request, answering: call)
            case .refuse(let call, let refusal): calls.removeValue(forKey: call)?.fail(refusal.error)
            case .suspend(let number, let holdingPending):
                guard let subscription = live[number]?.subscription else { continue }
                if holdingPending { subscription.suspendHoldingPending() } else { subscription.suspend() }
            case .resume(let number): live[number]?.subscription.resume()
            case .remove(let number): live.removeValue(forKey: number)?.subscription.cancel()
            }
        }
    }

    /// Keeps `call` to answer it later; its number.
    func keep(_ call: DBusMethodCall) -> UInt64 {
        let number = nextCall
        nextCall += 1
        calls[number] = call
        return number
    }

    private func create(_ number: UInt64, _ request: SubscribeRequest, answering call: UInt64) {
        guard let entry = table.entries[number], let follower = followers[entry.owner] else {
            calls.removeValue(forKey: call)?.fail(DBusError(name: DBusError.Name.failed, message: "the subscription could not be made"))
            return
        }
        let path = BusInterface.subscriptionPath(number)
        let loop = self.loop
        let subscription = bus.subscribeForPolling(
            request.patterns, policy: request.policy, limit: request.limit, budget: follower.budget,
            initial: request.initial, name: path.rawValue
        ) {
            // On the publishing thread: take the events on the loop, after checking the owner.
            try? loop.execute { context in context[local: BusService.key]?.deliver(number) }
        }
        live[number] = Live(subscription: subscription, owner: entry.owner)
        // The reply leaves now; the subscription's first events (its initial values) are taken
        // on the loop behind it.
        calls.removeValue(forKey: call)?.reply([.objectPath(path.rawValue)])
    }
}
