import DBus
import Logging
import NotifyBus
import NotifyBusProtocol

extension BusService {
    /// Subscription `number` has events ready: unless its owner's process has just stopped
    /// (then the table suspends it, holding what was not sent), takes them from the bus and
    /// sends them to the owner.
    func deliver(_ number: UInt64) {
        guard let entry = table.entries[number], let subscription = live[number]?.subscription else { return }
        // A stop is noticed at the latest here, before the events leave the bus: on a stop,
        // the watcher tells the table at once, and the subscription is suspended holding them.
        if entry.followsLife, !entry.isSuspended, let life, let token = followers[entry.owner]?.life {
            life.check(token)
        }
        send(subscription.poll(), of: number)
    }

    /// Sends `events` of subscription `number` to its owner: numbered from its next `seq`, in
    /// one `Events` signal or, past 1 MiB, in consecutive ones of at most 1 MiB.
    func send(_ events: [SubscriptionEvent], of number: UInt64) {
        guard !events.isEmpty, let record = live[number] else { return }
        live[number]?.nextSeq = record.nextSeq &+ UInt64(events.count)
        let path = BusInterface.subscriptionPath(number)
        for elements in EventElements.signals(events, firstSeq: record.nextSeq, origin: origin) {
            do {
                try connection.emitSignal(
                    path: path, interface: BusInterface.subscriptionInterface, member: BusInterface.eventsSignal,
                    vardicts: elements, destination: record.owner)
            } catch {
                logger.warning("could not send events", metadata: ["peer": "\(record.owner)", "error": "\(error)"])
                return
            }
        }
    }
}
