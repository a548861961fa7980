import DBus
import EpollLoop
import Logging
import NotifyBus
import NotifyBusProtocol
import SystemSupport

extension BusService {
    /// Asks the bus which process `owner` is, then reads its start time and group; the table
    /// hears the answer (`nil` when the owner left before).
    func identify(_ owner: BusName) {
        connection.credentials(of: owner) { [weak self] result in
            guard let self else { return }
            let identity: SubscriptionTable.Identity?
            switch result {
            case .success(let credentials):
                guard let pid = credentials.processID.flatMap({ Int32(exactly: $0) }) else {
                    identity = nil
                    break
                }
                // A process hidden from /proc (another PID namespace) is known by its PID alone.
                let process = ProcessIdentity.current(pid: pid) ?? ProcessIdentity(pid: pid, startTime: 0)
                identity = SubscriptionTable.Identity(process: process, group: ControlGroup.group(ofProcess: pid))
            case .failure(let error):
                logger.debug("cannot identify a caller", metadata: ["peer": "\(owner)", "error": "\(error)"])
                identity = nil
            }
            self.perform(self.table.identified(owner, identity))
        }
    }

    /// Follows `owner`: its subscriptions' budget within its application's, and its process's
    /// life; then admits its waiting calls.
    func follow(_ owner: BusName, _ identity: SubscriptionTable.Identity) {
        let application = identity.application
        let shared = applications[application]?.budget
            ?? bus.makeHoldBudget(limit: BusInterface.Limits.heldPerConnection, parent: globalBudget)
        applications[application, default: Application(budget: shared, owners: 0)].owners += 1
        let budget = bus.makeHoldBudget(limit: BusInterface.Limits.heldPerConnection, parent: shared)
        followers[owner] = Follower(application: application, budget: budget)
        if let life {
            let token = life.follow(process: identity.process, group: identity.group) { [weak self] canRun in
                guard let self else { return }
                self.perform(self.table.ownerLife(owner, canRun: canRun))
            }
            if followers[owner] != nil { followers[owner]?.life = token } else { life.unfollow(token) }
        }
        perform(table.admit(owner))
    }

    /// Stops following `owner`; what it made the daemon allocate goes back to the kernel.
    func forget(_ owner: BusName) {
        guard let follower = followers.removeValue(forKey: owner) else { return }
        if let token = follower.life { life?.unfollow(token) }
        scheduleTrim()
        guard var application = applications[follower.application] else { return }
        application.owners -= 1
        applications[follower.application] = application.owners > 0 ? application : nil
    }

    /// Trims the heap once, at the end of this round of the loop (after everything the round
    /// frees): a client that made the daemon allocate much and left leaves its resident size
    /// where it was.
    private func scheduleTrim() {
        guard !trimScheduled else { return }
        trimScheduled = true
        context.runSoon { [weak self] in
            self?.trimScheduled = false
            HeapMemory.trim()
        }
    }
}
