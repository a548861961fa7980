import DBus
import NotifyBusProtocol

/// Who owns which subscription, and why each one is suspended: the daemon's protocol logic as a
/// plain state whose events return actions, which `BusService` carries out.
///
/// A subscription is suspended while its owner asked for it (`Suspend`) or, when it follows
/// the freezer, while its owner's process cannot run (frozen or stopped); it is resumed when
/// neither holds any more. So an explicit `Suspend` outlasts a thaw, and a thaw does not resume
/// what the owner suspended.
struct SubscriptionTable {
    struct Entry: Equatable {
        let owner: BusName
        let followsLife: Bool
        var suspendedByCall = false
        var suspendedByLife = false
        var isSuspended: Bool { suspendedByCall || suspendedByLife }
    }

    struct Owner: Equatable {
        /// Its subscriptions, in the order they were made.
        var subscriptions: [UInt64] = []
        /// Whether its process can run, as last reported.
        var canRun = true
    }

    enum Action: Equatable {
        /// Make subscription `n` (on the bus, and its object).
        case create(UInt64)
        /// Suspend it on the bus.
        case suspend(UInt64)
        /// Resume it on the bus.
        case resume(UInt64)
        /// Cancel it on the bus and take its object away.
        case remove(UInt64)
        /// Start following the owner: when it leaves the bus, and its process's life.
        case follow(BusName)
        /// Stop following the owner.
        case forget(BusName)
    }

    private(set) var entries: [UInt64: Entry] = [:]
    private(set) var owners: [BusName: Owner] = [:]
    private var nextNumber: UInt64 = 1
    /// The most subscriptions one owner may have.
    let perOwnerLimit: Int

    init(perOwnerLimit: Int = BusInterface.Limits.subscriptionsPerConnection) {
        self.perOwnerLimit = perOwnerLimit
    }

    /// A new subscription for `owner`: its number and what to do, or `nil` past the owner's limit.
    mutating func subscribe(owner: BusName, followsLife: Bool) -> (number: UInt64, actions: [Action])? {
        var record = owners[owner] ?? Owner()
        guard record.subscriptions.count < perOwnerLimit else { return nil }
        var actions: [Action] = owners[owner] == nil ? [.follow(owner)] : []
        let number = nextNumber
        nextNumber += 1
        var entry = Entry(owner: owner, followsLife: followsLife)
        actions.append(.create(number))
        if followsLife, !record.canRun {
            entry.suspendedByLife = true
            actions.append(.suspend(number))
        }
        record.subscriptions.append(number)
        owners[owner] = record
        entries[number] = entry
        return (number, actions)
    }

    /// `Suspend` from the owner.
    mutating func suspend(_ number: UInt64) -> [Action] {
        update(number) { $0.suspendedByCall = true }
    }

    /// `Resume` from the owner: resumed unless its process cannot run.
    mutating func resume(_ number: UInt64) -> [Action] {
        update(number) { $0.suspendedByCall = false }
    }

    /// `Cancel` from the owner.
    mutating func cancel(_ number: UInt64) -> [Action] {
        guard let entry = entries.removeValue(forKey: number) else { return [] }
        owners[entry.owner]?.subscriptions.removeAll { $0 == number }
        guard owners[entry.owner]?.subscriptions.isEmpty == true else { return [.remove(number)] }
        owners[entry.owner] = nil
        return [.remove(number), .forget(entry.owner)]
    }

    /// The owner left the bus: every subscription of its goes.
    mutating func ownerLeft(_ owner: BusName) -> [Action] {
        guard let record = owners.removeValue(forKey: owner) else { return [] }
        var actions: [Action] = []
        for number in record.subscriptions {
            entries[number] = nil
            actions.append(.remove(number))
        }
        return actions + [.forget(owner)]
    }

    /// The owner's process can run again, or no longer can (frozen or stopped).
    mutating func ownerLife(_ owner: BusName, canRun: Bool) -> [Action] {
        guard var record = owners[owner], record.canRun != canRun else { return [] }
        record.canRun = canRun
        owners[owner] = record
        var actions: [Action] = []
        for number in record.subscriptions where entries[number]?.followsLife == true {
            actions += update(number) { $0.suspendedByLife = !canRun }
        }
        return actions
    }

    /// Applies `change` to subscription `number`; a suspend or resume when that changes whether it is suspended.
    private mutating func update(_ number: UInt64, _ change: (inout Entry) -> Void) -> [Action] {
        guard var entry = entries[number] else { return [] }
        let was = entry.isSuspended
        change(&entry)
        entries[number] = entry
        if entry.isSuspended == was { return [] }
        return [entry.isSuspended ? .suspend(number) : .resume(number)]
    }
}
