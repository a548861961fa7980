/// A bound on the entries that several subscriptions hold together, shared by all of them.
///
/// Each subscription bounds what it holds with its own `limit`. A budget adds a bound on what a
/// group of subscriptions holds in all: a service makes one per client, so that a client with many
/// subscriptions cannot hold more than its share, and gives every client's budget one parent, so
/// that all clients together stay under a global bound.
///
/// An entry counts against the subscription's budget and every ancestor of it. A subscription that
/// would hold one more entry past any of these bounds stops holding exactly as at its own limit:
/// it discards what it held, and on resume it gets a ``SubscriptionEvent/resync(time:reason:)`` and
/// every current value. Values are never lost, only counts. Its entries are released when it
/// flushes them, when it discards them, and when it is cancelled, so the budget serves again.
///
/// Entries are counted as the subscription's `limit` counts them: one per distinct key, one per
/// event under ``DeliveryPolicy/all``. Only a new entry is counted; another event for a key already
/// held costs nothing more. The backlog that an active subscriber collapses past its high-water
/// mark is held the same way and counts too.
///
/// ```swift
/// let clients = bus.makeHoldBudget(limit: 1_048_576)
/// let client = bus.makeHoldBudget(limit: 65_536, parent: clients)
/// let subscription = bus.subscribe(["battery/**"], budget: client)
/// ```
///
/// A budget belongs to the bus that made it. Given to another bus, it is ignored: a subscription
/// made with it there is bounded by its own `limit` alone, and a budget made there with it as
/// its `parent` has no parent. The budget lasts as long as the subscriptions made with it and the
/// budgets made with it as their parent; its handle only needs keeping to make more of them, or
/// to read ``heldCount``.
public final class HoldBudget: Sendable {
    /// The most entries that the subscriptions counting against it may hold in all.
    public let limit: Int
    /// The budget it counts against too, if any.
    public let parent: HoldBudget?
    let bus: NotificationBus
    let id: Int

    init(bus: NotificationBus, id: Int, limit: Int, parent: HoldBudget?) {
        self.bus = bus
        self.id = id
        self.limit = limit
        self.parent = parent
    }

    deinit {
        let id = self.id
        bus.withState { _ = $0.budgets.removeValue(forKey: id) }
    }

    /// How many entries count against it now: those of its subscriptions and of its descendants'.
    public var heldCount: Int {
        let id = self.id
        return bus.withState { $0.budgets[id]?.held ?? 0 }
    }
}

extension NotificationBus {
    /// Makes a budget that bounds how many entries the subscriptions made with it hold in all.
    ///
    /// - Parameters:
    ///   - limit: the most entries they hold together (negative counts as 0).
    ///   - parent: a budget that its entries also count against; ignored when another bus made it.
    /// - Returns: the budget, to pass as the `budget` of ``subscribe(_:policy:limit:budget:initial:highWaterMark:name:at:)``
    ///   or as the `parent` of another budget.
    public func makeHoldBudget(limit: Int, parent: HoldBudget? = nil) -> HoldBudget {
        let limit = max(0, limit)
        let parent = parent.flatMap { $0.bus === self ? $0 : nil }
        let parentID = parent?.id
        let id = withState { state -> Int in
            let id = state.nextBudgetID
            state.nextBudgetID += 1
            state.budgets[id] = BudgetCore(limit: limit, parent: parentID.flatMap { state.budgets[$0] })
            return id
        }
        return HoldBudget(bus: self, id: id, limit: limit, parent: parent)
    }
}

/// The counter of one ``HoldBudget``, kept in `BusState` and in the holds that count against it:
/// only touched under the bus lock.
final class BudgetCore {
    let limit: Int
    let parent: BudgetCore?
    @exclusivity(unchecked) var held = 0

    init(limit: Int, parent: BudgetCore?) {
        self.limit = limit
        self.parent = parent
    }

    /// Counts one more entry against this budget and its ancestors, unless one of them is full.
    /// - Returns: whether it did.
    @inline(never)
    func reserve() -> Bool {
        var budget: BudgetCore? = self
        while let b = budget {
            if b.held >= b.limit { return false }
            budget = b.parent
        }
        budget = self
        while let b = budget {
            b.held += 1
            budget = b.parent
        }
        return true
    }

    /// Returns `count` entries to this budget and its ancestors.
    func release(_ count: Int) {
        var budget: BudgetCore? = self
        while let b = budget {
            b.held -= count
            budget = b.parent
        }
    }
}
