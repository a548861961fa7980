import NotifyBus
import Testing

/// Budgets shared by several subscriptions: past one, a subscription stops holding as at its own limit.
@Suite struct HoldBudgetTests {
    let bus = NotificationBus(clock: .zero)

    /// The events of a resume that overflowed: `resumed`, `resync`, then the current values.
    func expectResync(_ events: [SubscriptionEvent], _ notes: [Note], time: Duration = .zero) {
        #expect(events.prefix(2) == [.resumed(time: time, flushed: notes.count), .resync(time: time, reason: .limit)])
        #expect(events.dropFirst(2).compactMap(\.notification).map(Note.init) == notes)
        #expect(events.dropFirst(2).compactMap(\.notification).allSatisfy { $0.kind == .resync })
    }

    @Test func twoSubscriptionsSharingABudgetOverflowTogetherAndResyncWithEveryValue() {
        let budget = bus.makeHoldBudget(limit: 3)
        let a = bus.subscribe(["a/*"], budget: budget)
        let b = bus.subscribe(["b/*"], budget: budget)
        a.suspend()
        b.suspend()
        bus.publish("a/1", 1)
        bus.publish("a/2", 1)
        bus.publish("b/1", 1)
        bus.publish("a/1", 2)  // a key already held: nothing more
        #expect(budget.heldCount == 3)
        bus.publish("b/2", 1)  // a fourth entry: b overflows and lets go of its own
        #expect(budget.heldCount == 2)
        bus.publish("b/3", 1)  // b holds nothing more until it resumes
        #expect(budget.heldCount == 2)
        a.resume()
        b.resume()
        #expect(budget.heldCount == 0)
        #expect(a.poll().dropFirst() == [
            .resumed(time: .zero, flushed: 2),
            .notification(BusNotification(
                key: "a/2", value: 1, previous: nil, coalesced: 1, firstEventTime: .zero, lastEventTime: .zero,
                time: .zero, kind: .flushed)),
            .notification(BusNotification(
                key: "a/1", value: 2, previous: nil, coalesced: 2, firstEventTime: .zero, lastEventTime: .zero,
                time: .zero, kind: .flushed)),
        ])
        expectResync(Array(b.poll().dropFirst()), [Note("b/1", 1, 0), Note("b/2", 1, 0), Note("b/3", 1, 0)])
    }

    @Test func theSubscriptionThatNeedsTheEntryPastTheBudgetIsTheOneThatOverflows() {
        let budget = bus.makeHoldBudget(limit: 2)
        let a = bus.subscribe(["a/*"], budget: budget)
        let b = bus.subscribe(["b/*"], budget: budget)
        a.suspend()
        b.suspend()
        bus.publish("b/1", 1)
        bus.publish("b/2", 1)
        bus.publish("a/1", 1)  // the third entry is a's
        a.resume()
        b.resume()
        expectResync(Array(a.poll().dropFirst()), [Note("a/1", 1, 0)])
        #expect(b.pollNotes() == [Note("b/1", 1), Note("b/2", 1)])
    }

    @Test func theParentBoundsAllItsChildrenTogether() {
        let global = bus.makeHoldBudget(limit: 4)
        let one = bus.makeHoldBudget(limit: 3, parent: global)
        let two = bus.makeHoldBudget(limit: 3, parent: global)
        #expect(one.parent === global)
        let a = bus.subscribe(["a/*"], budget: one)
        let b = bus.subscribe(["b/*"], budget: two)
        a.suspend()
        b.suspend()
        for k in 1...2 { bus.publish("a/\(k)", 1) }
        for k in 1...2 { bus.publish("b/\(k)", 1) }
        #expect((one.heldCount, two.heldCount, global.heldCount) == (2, 2, 4))
        bus.publish("a/3", 1)  // within `one`, past `global`
        #expect((one.heldCount, two.heldCount, global.heldCount) == (0, 2, 2))
        bus.publish("b/3", 1)  // within both now that a let go
        #expect((one.heldCount, two.heldCount, global.heldCount) == (0, 3, 3))
        a.resume()
        b.resume()
        expectResync(Array(a.poll().dropFirst()), [Note("a/1", 1, 0), Note("a/2", 1, 0), Note("a/3", 1, 0)])
        #expect(b.pollNotes() == [Note("b/1", 1), Note("b/2", 1), Note("b/3", 1)])
        #expect(global.heldCount == 0)
    }

    @Test func entriesAreReleasedOnResumeAndCancelSoTheBudgetServesAgain() {
        let budget = bus.makeHoldBudget(limit: 2)
        let a = bus.subscribe(budget: budget)
        a.suspend()
        bus.publish("x", 1)
        bus.publish("y", 1)
        #expect(budget.heldCount == 2)
        a.resume()
        #expect(budget.heldCount == 0)
        a.suspend()
        bus.publish("x", 2)
        bus.publish("y", 2)
        a.resume()
        #expect(a.pollNotes().suffix(2) == [Note("x", 2, previous: 1), Note("y", 2, previous: 1)])

        let b = bus.subscribe(budget: budget)
        b.suspend()
        bus.publish("x", 3)
        bus.publish("z", 3)
        #expect(budget.heldCount == 2)
        b.cancel()
        #expect(budget.heldCount == 0)
        let c = bus.subscribe(budget: budget)
        c.suspend()
        bus.publish("x", 4)
        bus.publish("y", 4)
        c.resume()
        #expect(c.pollNotes() == [Note("x", 4), Note("y", 4)])
    }

    @Test func droppingASubscriptionReleasesItsEntries() {
        let budget = bus.makeHoldBudget(limit: 10)
        do {
            let a = bus.subscribe(budget: budget)
            a.suspend()
            bus.publish("x", 1)
            #expect(budget.heldCount == 1)
        }
        #expect(budget.heldCount == 0)
    }

    @Test func underAllEachHeldEventIsOneEntry() {
        let budget = bus.makeHoldBudget(limit: 3)
        let a = bus.subscribe(policy: .all, budget: budget)
        a.suspend()
        bus.publish("x", 1)
        bus.publish("x", 2)
        bus.publish("x", 3)
        #expect(budget.heldCount == 3)
        bus.publish("x", 4)
        #expect(budget.heldCount == 0)
        a.resume()
        expectResync(Array(a.poll().dropFirst()), [Note("x", 4, 0)])
    }

    @Test func dropHoldsNothingAndCountsNothing() {
        let budget = bus.makeHoldBudget(limit: 1)
        let a = bus.subscribe(policy: .drop, budget: budget)
        a.suspend()
        bus.publish("x", 1)
        bus.publish("y", 1)
        #expect(budget.heldCount == 0)
    }

    @Test func theSubscriptionsOwnLimitStillApplies() {
        let budget = bus.makeHoldBudget(limit: 100)
        let a = bus.subscribe(limit: 1, budget: budget)
        a.suspend()
        bus.publish("x", 1)
        bus.publish("y", 1)
        #expect(budget.heldCount == 0)
        a.resume()
        expectResync(Array(a.poll().dropFirst()), [Note("x", 1, 0), Note("y", 1, 0)])
    }

    @Test func aSlowActiveSubscribersCollapsedBacklogCountsToo() {
        let budget = bus.makeHoldBudget(limit: 1)
        let a = bus.subscribe(["k/*"], budget: budget, highWaterMark: 1)
        bus.publish("k/a", 1)  // the backlog reaches the mark: later events are held
        bus.publish("k/a", 2)
        #expect(budget.heldCount == 1)
        bus.publish("k/b", 1)  // a second entry: past the budget
        #expect(budget.heldCount == 0)
        let events = a.poll()
        #expect(events.contains(.resync(time: .zero, reason: .limit)))
        #expect(events.compactMap(\.notification).map(Note.init) == [
            Note("k/a", 1), Note("k/a", 2, 0, previous: 1), Note("k/b", 1, 0),
        ])
    }

    @Test func aBudgetOfAnotherBusIsIgnored() {
        let other = NotificationBus(clock: .zero)
        let foreign = other.makeHoldBudget(limit: 0)
        let a = bus.subscribe(budget: foreign)
        let child = bus.makeHoldBudget(limit: 5, parent: foreign)
        #expect(child.parent == nil)
        let b = bus.subscribe(budget: child)
        a.suspend()
        b.suspend()
        bus.publish("x", 1)
        a.resume()
        b.resume()
        #expect(a.pollNotes() == [Note("x", 1)])
        #expect(b.pollNotes() == [Note("x", 1)])
        #expect(foreign.heldCount == 0)
    }

    @Test func aBudgetLastsAsLongAsItsSubscriptions() {
        var budget: HoldBudget? = bus.makeHoldBudget(limit: 1)
        let a = bus.subscribe(budget: budget)
        budget = nil
        a.suspend()
        bus.publish("x", 1)
        bus.publish("y", 1)  // still bounded by the budget whose handle is gone
        a.resume()
        expectResync(Array(a.poll().dropFirst()), [Note("x", 1, 0), Note("y", 1, 0)])
    }

    @Test func callbackSubscriptionsTakeABudgetToo() {
        let budget = bus.makeHoldBudget(limit: 0)
        let a = bus.subscribe(budget: budget) { _ in }
        a.suspend()
        bus.publish("x", 1)
        #expect(budget.heldCount == 0)
        #expect(budget.limit == 0)
    }
}
