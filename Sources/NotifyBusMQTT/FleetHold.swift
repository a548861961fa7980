import OrderedCollections

/// What a suspended fleet watcher holds, as a plain state machine (`notifywatch --mqtt` suspends
/// and resumes it as any live watching): while suspended, each host's key keeps one notification
/// (its latest value and time, the counts of the messages it stands for added, the `previous` of
/// the first: the value last printed); the resume flushes them in the order of each one's latest
/// message. Host and broker statuses are never held.
package struct FleetHold: Sendable {
    /// What to print, in order.
    package enum Output: Sendable, Hashable {
        /// An event, as received or as the flush merged it.
        case event(FleetEvent)
        /// The `suspended` line.
        case suspended
        /// The `resumed` line, with how many notifications the flush that follows delivers.
        case resumed(flushed: Int)
    }

    /// Whether the watcher is suspended.
    package private(set) var isSuspended = false
    private var held: OrderedDictionary<String, FleetNotification> = [:]

    /// A watcher that is not suspended.
    package init() {}

    /// How many notifications are held.
    package var heldCount: Int { held.count }

    /// Handles what the broker brought.
    package mutating func receive(_ event: FleetEvent) -> [Output] {
        guard isSuspended, case .notification(let notification) = event else { return [.event(event)] }
        let slot = notification.host + "\u{0}" + notification.key
        if var merged = held.removeValue(forKey: slot) {
            merged.value = notification.value
            merged.time = notification.time
            merged.retained = notification.retained
            merged.coalesced += notification.coalesced
            held[slot] = merged
        } else {
            held[slot] = notification
        }
        return []
    }

    /// Suspends: the `suspended` line; nothing when suspended already.
    package mutating func suspend() -> [Output] {
        guard !isSuspended else { return [] }
        isSuspended = true
        return [.suspended]
    }

    /// Resumes: the `resumed` line and the flush; nothing when not suspended.
    package mutating func resume() -> [Output] {
        guard isSuspended else { return [] }
        isSuspended = false
        let flushed = held.values.map { Output.event(.notification($0)) }
        held = [:]
        return [.resumed(flushed: flushed.count)] + flushed
    }
}
