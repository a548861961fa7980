import DBus
import EpollLoop
import Logging

/// The freeze mechanism's actions carried out: the files, the systemd user manager, the timers.
extension LifecycleDriver {
    /// Tells the mechanism `event` and carries out what follows.
    func freezeStep(_ event: FreezeMechanism.Event) {
        guard !stopped else { return }
        carryOut(mechanism.handle(event))
    }

    /// Carries out the mechanism's actions, in order.
    func carryOut(_ actions: [FreezeMechanism.Action]) {
        for action in actions {
            switch action {
            case .prepare(let group):
                let error = freezer == nil ? "no freezer" : freezer?.prepare(group)
                if let error { logger.warning("lifecycle: \(group) not frozen: \(error)") }
                freezeStep(.prepared(group: group, error: error))
            case .release(let group):
                freezer?.release(group)
            case .lookUpUnit(let group):
                guard let units = session?.units else {
                    freezeStep(.unitLookedUp(group: group, known: false))
                    continue
                }
                units.lookUp(unit: Self.unit(of: group)) { [weak self] lookup in
                    if case .failed(let error) = lookup { self?.logger.debug("lifecycle: GetUnit(\(Self.unit(of: group))): \(error)") }
                    guard case .known = lookup else { self?.freezeStep(.unitLookedUp(group: group, known: false)); return }
                    self?.freezeStep(.unitLookedUp(group: group, known: true))
                }
            case .freezeUnit(let group):
                session?.units.freeze(unit: Self.unit(of: group)) { [weak self] result in
                    var failure: String?
                    if case .failure(let error) = result {
                        failure = "FreezeUnit(\(Self.unit(of: group))): \(error)"
                        self?.logger.warning("lifecycle: cannot freeze \(group): \(error)")
                    }
                    self?.freezeStep(.unitFrozen(group: group, error: failure))
                    if failure == nil { self?.readBack(group) }
                }
            case .thawUnit(let group, let awaited):
                session?.units.thaw(unit: Self.unit(of: group)) { [weak self] result in
                    guard awaited else { return }
                    var failure: String?
                    if case .failure(let error) = result { failure = "ThawUnit(\(Self.unit(of: group))): \(error)" }
                    self?.cancelPatience(group)
                    self?.freezeStep(.unitThawed(group: group, error: failure))
                }
            case .armThawPatience(let group):
                cancelPatience(group)
                thawPatience[group] = context.scheduleTimer(after: FreezeMechanism.thawUnitPatience) { [weak self] in
                    self?.thawPatience[group] = nil
                    self?.freezeStep(.thawPatienceOver(group: group))
                }
            case .write(let group, let freeze):
                let error = freezer?.write(freeze, to: group)
                if let error { logger.error("lifecycle: cannot \(freeze ? "freeze" : "thaw") \(group): \(error)") }
                freezeStep(.written(group: group, freeze: freeze, error: error))
                if freeze, error == nil { readBack(group) }
            case .report(let event):
                handle(event)
            }
        }
    }

    /// The kernel may have said `frozen 1` already (an ancestor frozen), before the watch saw it.
    private func readBack(_ group: String) {
        guard case .changed(_, true, let ownBitSet)? = freezer?.read(group) else { return }
        freezeStep(.events(group: group, frozen: true, ownBitSet: ownBitSet))
    }

    private func cancelPatience(_ group: String) {
        if let timer = thawPatience.removeValue(forKey: group) { context.cancelTimer(timer) }
    }

    /// The unit of a cgroup: its last path component.
    static func unit(of group: String) -> String {
        String(group.split(separator: "/").last ?? "")
    }
}
