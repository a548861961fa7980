/// How the policy's freezes and thaws are carried out, as a plain state machine beside
/// `LifecyclePolicy` (specification: Freezing background apps, "How" and "Woken when something
/// needs the app"): events in, actions out, no I/O. The driver performs the actions and reports
/// what came of them.
///
/// A freeze: the cgroup is listed in the state file and its `cgroup.events` watched
/// (`.prepare`), then waits until the wake watch sees its connections' messages (`.covered`),
/// then goes through the systemd user manager when one is on the bus and knows the unit
/// (`GetUnit`, then `FreezeUnit`), else writes `1` to its `cgroup.freeze`; it is frozen when
/// `cgroup.events` says `frozen 1`. A thaw goes the way the freeze went: `ThawUnit`, with the
/// cgroup's own file written if systemd fails or takes longer than `thawUnitPatience`; else `0`
/// written. Reports to the policy (`.report`) say what the kernel and the others did:
/// confirmed, not frozen (someone else's, or failed), thawed by someone else, removed.
///
/// A `frozen 0` while the cgroup's own `cgroup.freeze` still reads 1 is not a thaw: a task
/// exiting or entering a frozen cgroup makes it read so for a moment.
package struct FreezeMechanism: Sendable {
    /// What it is told.
    package enum Event: Sendable, Hashable {
        /// The policy asks to freeze the cgroup; `ownBitSet`: its own `cgroup.freeze` reads 1 now.
        case freeze(group: String, ownBitSet: Bool)
        /// The policy asks to thaw the cgroup.
        case thaw(group: String)
        /// `.prepare` was done, or failed (`error`).
        case prepared(group: String, error: String?)
        /// The wake watch sees the messages to these cgroups' connections now.
        case covered(Set<String>)
        /// The wake watch cannot see them.
        case coverFailed(reason: String)
        /// The user manager's answer to `GetUnit`: it knows the unit, or not (or is not there).
        case unitLookedUp(group: String, known: Bool)
        /// `FreezeUnit` answered: done, or the error.
        case unitFrozen(group: String, error: String?)
        /// `ThawUnit` answered: done, or the error.
        case unitThawed(group: String, error: String?)
        /// `thawUnitPatience` passed since `ThawUnit` was asked.
        case thawPatienceOver(group: String)
        /// `cgroup.freeze` was written: done, or the error.
        case written(group: String, freeze: Bool, error: String?)
        /// `cgroup.events` changed: `frozen` and the cgroup's own `cgroup.freeze` as read now.
        case events(group: String, frozen: Bool, ownBitSet: Bool)
        /// The cgroup is gone.
        case removed(group: String)
        /// The lifecycle stops: thaw everything now, without waiting for anyone.
        case stop
    }

    /// What to do, in order.
    package enum Action: Sendable, Hashable {
        /// List the cgroup in the state file and watch its `cgroup.events`; answer `.prepared`.
        case prepare(group: String)
        /// Stop watching it and take it out of the state file (unless writing its `0` failed: then
        /// it stays listed, for the next start or `--thaw-all`).
        case release(group: String)
        /// Ask the user manager whether it knows the cgroup's unit.
        case lookUpUnit(group: String)
        /// `FreezeUnit`.
        case freezeUnit(group: String)
        /// `ThawUnit`; `awaited`: answer `.unitThawed` (else nobody waits for it).
        case thawUnit(group: String, awaited: Bool)
        /// Answer `.thawPatienceOver` after `thawUnitPatience`.
        case armThawPatience(group: String)
        /// Write `1` (`freeze`) or `0` to its `cgroup.freeze`; answer `.written`.
        case write(group: String, freeze: Bool)
        /// Tell the policy.
        case report(LifecyclePolicy.Event)
    }

    /// Where one cgroup is.
    enum Step: Sendable, Hashable {
        /// Being listed and watched.
        case preparing
        /// Waiting until the wake watch covers it.
        case awaitingCover
        /// `GetUnit` asked.
        case lookingUp
        /// `FreezeUnit` asked; `thawWanted`: thaw once it answered.
        case freezingUnit(thawWanted: Bool)
        /// Frozen by the unit or the file; `confirmed` once `cgroup.events` said so.
        case frozen(byUnit: Bool, confirmed: Bool)
        /// `ThawUnit` asked, its file written if it does not answer in time.
        case thawingUnit
    }

    /// How long a thaw waits for `ThawUnit` before writing `cgroup.freeze` itself.
    package static let thawUnitPatience = Duration.milliseconds(50)

    /// Whether a systemd user manager may know the units (a session bus is followed).
    package let hasUnitManager: Bool
    private(set) var steps: [String: Step] = [:]
    private var covered: Set<String> = []

    /// A mechanism with nothing in hand.
    package init(hasUnitManager: Bool) {
        self.hasUnitManager = hasUnitManager
    }

    /// The cgroups in hand (being frozen, frozen, or being thawed through the manager).
    package var groups: Set<String> { Set(steps.keys) }

    /// Takes `event`; returns what to do, in order.
    package mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .freeze(let group, let ownBitSet):
            guard steps[group] == nil else { return [] }
            if ownBitSet { return [.report(.notFrozen(group: group, failed: false))] }
            steps[group] = .preparing
            return [.prepare(group: group)]
        case .thaw(let group):
            return thaw(group)
        case .prepared(let group, let error):
            guard steps[group] == .preparing else { return [] }
            if error != nil { return fail(group) }
            steps[group] = .awaitingCover
            return covered.contains(group) ? proceed(group) : []
        case .covered(let set):
            covered = set
            return steps.keys.sorted().filter { steps[$0] == .awaitingCover && set.contains($0) }.flatMap { proceed($0) }
        case .coverFailed:
            covered = []
            return steps.keys.sorted().filter { steps[$0] == .awaitingCover }.flatMap { fail($0) }
        case .unitLookedUp(let group, let known):
            guard steps[group] == .lookingUp else { return [] }
            if known {
                steps[group] = .freezingUnit(thawWanted: false)
                return [.freezeUnit(group: group)]
            }
            steps[group] = .frozen(byUnit: false, confirmed: false)
            return [.write(group: group, freeze: true)]
        case .unitFrozen(let group, let error):
            guard case .freezingUnit(let thawWanted) = steps[group] else { return [] }
            if error != nil {
                // systemd froze nothing; a thaw asked meanwhile has nothing to undo.
                return fail(group, report: !thawWanted)
            }
            steps[group] = .frozen(byUnit: true, confirmed: false)
            return thawWanted ? thaw(group) : []
        case .unitThawed(let group, let error):
            guard steps[group] == .thawingUnit else { return [] }
            steps[group] = nil
            return (error == nil ? [] : [.write(group: group, freeze: false)]) + [.release(group: group)]
        case .thawPatienceOver(let group):
            guard steps[group] == .thawingUnit else { return [] }
            steps[group] = nil
            return [.write(group: group, freeze: false), .release(group: group)]
        case .written(let group, let freeze, let error):
            guard freeze, error != nil, case .frozen(false, _) = steps[group] else { return [] }
            return fail(group)
        case .events(let group, let frozen, let ownBitSet):
            guard case .frozen(let byUnit, let confirmed) = steps[group] else { return [] }
            if frozen {
                guard !confirmed else { return [] }
                steps[group] = .frozen(byUnit: byUnit, confirmed: true)
                return [.report(.frozen(group: group, true))]
            }
            // `frozen 0` with its own bit still 1: a task leaving or joining, not a thaw.
            guard !ownBitSet else { return [] }
            steps[group] = nil
            return [.release(group: group), .report(.thawedElsewhere(group: group))]
        case .removed(let group):
            guard steps.removeValue(forKey: group) != nil else { return [] }
            return [.release(group: group), .report(.groupRemoved(group: group))]
        case .stop:
            var actions: [Action] = []
            for group in steps.keys.sorted() {
                switch steps[group] {
                case .freezingUnit, .frozen(byUnit: true, _), .thawingUnit:
                    // systemd is told too (after any FreezeUnit still on its way, on the same
                    // connection); the cgroup stays listed if FreezeUnit may still land.
                    actions.append(.thawUnit(group: group, awaited: false))
                default:
                    break
                }
                actions.append(.write(group: group, freeze: false))
                if case .freezingUnit = steps[group] { continue }
                actions.append(.release(group: group))
            }
            steps = [:]
            return actions
        }
    }

    /// Past its cover: through the user manager if there may be one, else the file.
    private mutating func proceed(_ group: String) -> [Action] {
        if hasUnitManager {
            steps[group] = .lookingUp
            return [.lookUpUnit(group: group)]
        }
        steps[group] = .frozen(byUnit: false, confirmed: false)
        return [.write(group: group, freeze: true)]
    }

    private mutating func thaw(_ group: String) -> [Action] {
        switch steps[group] {
        case nil, .thawingUnit:
            return []
        case .preparing, .awaitingCover, .lookingUp:
            // Nothing was written yet.
            steps[group] = nil
            return [.release(group: group)]
        case .freezingUnit:
            steps[group] = .freezingUnit(thawWanted: true)
            return []
        case .frozen(let byUnit, _):
            if byUnit {
                steps[group] = .thawingUnit
                return [.thawUnit(group: group, awaited: true), .armThawPatience(group: group)]
            }
            steps[group] = nil
            return [.write(group: group, freeze: false), .release(group: group)]
        }
    }

    /// The freeze failed: nothing of it is left (its file written 0 if it may have been written 1).
    private mutating func fail(_ group: String, report: Bool = true) -> [Action] {
        let written: Bool
        if case .frozen = steps[group] { written = true } else { written = false }
        steps[group] = nil
        return (written ? [.write(group: group, freeze: false)] : []) + [.release(group: group)]
            + (report ? [.report(.notFrozen(group: group, failed: true))] : [])
    }
}
