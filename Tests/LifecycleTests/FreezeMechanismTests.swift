import NotifyBusLifecycle
import Testing

/// How freezes and thaws are carried out (the article Freezing background apps, "How", "Woken
/// when something needs the app"), on the mechanism driven without I/O.
@Suite struct FreezeMechanismTests {
    static let a = "/app.slice/app-test-org.example.A-1.scope"
    static let b = "/app.slice/app-test-org.example.B-1.scope"

    /// A freeze of `a` carried to where it waits for `cgroup.events`.
    static func frozen(unitManager: Bool, known: Bool = true) -> FreezeMechanism {
        var m = FreezeMechanism(hasUnitManager: unitManager)
        _ = m.handle(.freeze(group: a, ownBitSet: false))
        _ = m.handle(.prepared(group: a, error: nil))
        _ = m.handle(.covered([a]))
        if unitManager {
            _ = m.handle(.unitLookedUp(group: a, known: known))
            if known { _ = m.handle(.unitFrozen(group: a, error: nil)) }
        }
        return m
    }

    @Test func aFreezeIsListedWatchedCoveredThenWrittenAndConfirmedByTheKernel() {
        var m = FreezeMechanism(hasUnitManager: false)
        #expect(m.handle(.freeze(group: Self.a, ownBitSet: false)) == [.prepare(group: Self.a)])
        // Nothing is written before the messages to its connections are seen.
        #expect(m.handle(.prepared(group: Self.a, error: nil)) == [])
        #expect(m.handle(.covered([Self.b])) == [])
        #expect(m.handle(.covered([Self.a, Self.b])) == [.write(group: Self.a, freeze: true)])
        #expect(m.handle(.events(group: Self.a, frozen: false, ownBitSet: true)) == [])
        #expect(m.handle(.events(group: Self.a, frozen: true, ownBitSet: true)) == [.report(.frozen(group: Self.a, true))])
        #expect(m.handle(.events(group: Self.a, frozen: true, ownBitSet: true)) == [])
        #expect(m.handle(.thaw(group: Self.a)) == [.write(group: Self.a, freeze: false), .release(group: Self.a)])
        #expect(m.groups.isEmpty)
    }

    @Test func aCgroupAlreadyCoveredIsWrittenOnceListed() {
        var m = FreezeMechanism(hasUnitManager: false)
        _ = m.handle(.covered([Self.a]))
        _ = m.handle(.freeze(group: Self.a, ownBitSet: false))
        #expect(m.handle(.prepared(group: Self.a, error: nil)) == [.write(group: Self.a, freeze: true)])
    }

    @Test func aCgroupSomeoneElseFrozeIsNeverWrittenNorListed() {
        var m = FreezeMechanism(hasUnitManager: true)
        #expect(m.handle(.freeze(group: Self.a, ownBitSet: true)) == [.report(.notFrozen(group: Self.a, failed: false))])
        #expect(m.groups.isEmpty)
    }

    @Test func aUnitTheManagerKnowsIsFrozenAndThawedThroughIt() {
        var m = FreezeMechanism(hasUnitManager: true)
        _ = m.handle(.freeze(group: Self.a, ownBitSet: false))
        _ = m.handle(.prepared(group: Self.a, error: nil))
        #expect(m.handle(.covered([Self.a])) == [.lookUpUnit(group: Self.a)])
        #expect(m.handle(.unitLookedUp(group: Self.a, known: true)) == [.freezeUnit(group: Self.a)])
        #expect(m.handle(.unitFrozen(group: Self.a, error: nil)) == [])
        #expect(m.handle(.events(group: Self.a, frozen: true, ownBitSet: true)) == [.report(.frozen(group: Self.a, true))])
        #expect(m.handle(.thaw(group: Self.a)) == [.thawUnit(group: Self.a, awaited: true), .armThawPatience(group: Self.a)])
        // systemd's own write of 0 is not someone else's thaw.
        #expect(m.handle(.events(group: Self.a, frozen: false, ownBitSet: false)) == [])
        #expect(m.handle(.unitThawed(group: Self.a, error: nil)) == [.release(group: Self.a)])
        #expect(m.handle(.thawPatienceOver(group: Self.a)) == [])
    }

    @Test func aThawUnitThatFailsOrTakesTooLongIsWrittenInstead() {
        var failing = Self.frozen(unitManager: true)
        _ = failing.handle(.thaw(group: Self.a))
        #expect(failing.handle(.unitThawed(group: Self.a, error: "no")) == [.write(group: Self.a, freeze: false), .release(group: Self.a)])
        var slow = Self.frozen(unitManager: true)
        _ = slow.handle(.thaw(group: Self.a))
        #expect(slow.handle(.thawPatienceOver(group: Self.a)) == [.write(group: Self.a, freeze: false), .release(group: Self.a)])
        #expect(slow.handle(.unitThawed(group: Self.a, error: nil)) == [])
    }

    @Test func aUnitTheManagerDoesNotKnowIsWritten() {
        var m = Self.frozen(unitManager: true, known: false)
        #expect(m.groups == [Self.a])
        #expect(m.handle(.thaw(group: Self.a)) == [.write(group: Self.a, freeze: false), .release(group: Self.a)])
    }

    @Test func aThawAskedWhileFreezeUnitIsOnItsWayFollowsItsAnswer() {
        var m = FreezeMechanism(hasUnitManager: true)
        _ = m.handle(.freeze(group: Self.a, ownBitSet: false))
        _ = m.handle(.prepared(group: Self.a, error: nil))
        _ = m.handle(.covered([Self.a]))
        _ = m.handle(.unitLookedUp(group: Self.a, known: true))
        #expect(m.handle(.thaw(group: Self.a)) == [])
        #expect(m.handle(.unitFrozen(group: Self.a, error: nil)) == [.thawUnit(group: Self.a, awaited: true), .armThawPatience(group: Self.a)])
    }

    @Test func aFailedFreezeUnitIsReportedAndLeavesNothing() {
        var m = FreezeMechanism(hasUnitManager: true)
        _ = m.handle(.freeze(group: Self.a, ownBitSet: false))
        _ = m.handle(.prepared(group: Self.a, error: nil))
        _ = m.handle(.covered([Self.a]))
        _ = m.handle(.unitLookedUp(group: Self.a, known: true))
        #expect(m.handle(.unitFrozen(group: Self.a, error: "Unit does not support freezing")) == [
            .release(group: Self.a), .report(.notFrozen(group: Self.a, failed: true)),
        ])
        #expect(m.groups.isEmpty)
    }

    @Test func aFailedListingOrCoverFreezesNothing() {
        var listing = FreezeMechanism(hasUnitManager: false)
        _ = listing.handle(.freeze(group: Self.a, ownBitSet: false))
        #expect(listing.handle(.prepared(group: Self.a, error: "read-only")) == [
            .release(group: Self.a), .report(.notFrozen(group: Self.a, failed: true)),
        ])
        var cover = FreezeMechanism(hasUnitManager: false)
        _ = cover.handle(.freeze(group: Self.a, ownBitSet: false))
        _ = cover.handle(.prepared(group: Self.a, error: nil))
        #expect(cover.handle(.coverFailed(reason: "AccessDenied")) == [
            .release(group: Self.a), .report(.notFrozen(group: Self.a, failed: true)),
        ])
    }

    @Test func aFailedWriteIsUndoneAndReported() {
        var m = Self.frozen(unitManager: false)
        #expect(m.handle(.written(group: Self.a, freeze: true, error: "EACCES")) == [
            .write(group: Self.a, freeze: false), .release(group: Self.a), .report(.notFrozen(group: Self.a, failed: true)),
        ])
    }

    @Test func frozenZeroWhileItsOwnBitIsOneIsATaskLeavingNotAThaw() {
        var m = Self.frozen(unitManager: false)
        _ = m.handle(.events(group: Self.a, frozen: true, ownBitSet: true))
        #expect(m.handle(.events(group: Self.a, frozen: false, ownBitSet: true)) == [])
        #expect(m.groups == [Self.a])
        #expect(m.handle(.events(group: Self.a, frozen: true, ownBitSet: true)) == [])
    }

    @Test func itsOwnBitReadingZeroIsAThawBySomeoneElse() {
        var byUnit = Self.frozen(unitManager: true)
        _ = byUnit.handle(.events(group: Self.a, frozen: true, ownBitSet: true))
        #expect(byUnit.handle(.events(group: Self.a, frozen: false, ownBitSet: false)) == [
            .release(group: Self.a), .report(.thawedElsewhere(group: Self.a)),
        ])
        #expect(byUnit.groups.isEmpty)
        // Frozen again later: the whole way again.
        #expect(byUnit.handle(.freeze(group: Self.a, ownBitSet: false)) == [.prepare(group: Self.a)])
    }

    @Test func aRemovedCgroupIsReleased() {
        var m = Self.frozen(unitManager: false)
        #expect(m.handle(.removed(group: Self.a)) == [.release(group: Self.a), .report(.groupRemoved(group: Self.a))])
    }

    @Test func stoppingWritesEveryThawAndTellsTheManager() {
        var m = Self.frozen(unitManager: true)
        _ = m.handle(.freeze(group: Self.b, ownBitSet: false))
        _ = m.handle(.prepared(group: Self.b, error: nil))
        _ = m.handle(.covered([Self.a, Self.b]))
        _ = m.handle(.unitLookedUp(group: Self.b, known: true))
        // b's FreezeUnit is on its way: told to thaw after it, written 0, and left listed.
        #expect(m.handle(.stop) == [
            .thawUnit(group: Self.a, awaited: false), .write(group: Self.a, freeze: false), .release(group: Self.a),
            .thawUnit(group: Self.b, awaited: false), .write(group: Self.b, freeze: false),
        ])
        #expect(m.groups.isEmpty)
    }
}
