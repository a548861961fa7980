import DBus
import EpollLoop
import Logging

/// Sees the messages that need a frozen app (specification: Freezing background apps, "Woken
/// when something needs the app"): a monitor connection of its own (`DBusMonitor`) whose rules
/// name only the connections of the watched cgroups, by unique name and by each well-known name
/// they own (`type='method_call',destination='…'`, `type='signal',destination='…'`). A copied
/// method call or unicast signal, not sent by the daemon itself, reports its destination's
/// cgroup; its body is never read.
///
/// The monitor is replaced whenever the connections to watch change (the new one ready before
/// the old one is closed, so nothing passes unseen between them), and there is none while nothing
/// is watched. Which connections a cgroup holds comes from `BusPeers`; while that is not
/// complete, the watch waits.
///
/// Loop-confined: create it, use it and stop it on the loop thread of `connection`; `handler`
/// runs there.
final class WakeWatch {
    /// What it reports.
    enum Event: Sendable, Hashable {
        /// The messages to these cgroups' connections are seen now.
        case covered(Set<String>)
        /// A message needs a connection of the cgroup.
        case message(group: String)
        /// The bus refused the monitor the watched cgroups need (its error).
        case failed(reason: String)
        /// The monitor connection was lost.
        case lost(reason: String)
    }

    /// The most match rules one monitor asks for.
    static let maximumRules = 512

    /// One monitor and what its rules cover.
    private struct Watching {
        let monitor: DBusMonitor
        /// Each destination its rules name, with its cgroup.
        let destinations: [String: String]
        var groups: Set<String>
        var isReady = false
    }

    private let connection: DBusConnection
    private let peers: BusPeers
    private unowned let context: LoopContext
    private let logger: Logger
    private let groupOf: (Int32) -> String?
    private let handler: (Event) -> Void
    private var wanted: Set<String> = []
    private var current: Watching?
    private var next: Watching?
    /// The destinations whose monitor the bus refused: not asked again until they change.
    private var refused: [String: String]?
    private var reported: Set<String>?
    private var stopped = false

    /// A watch of nothing yet, on `connection`'s bus; `groupOf` tells a process's cgroup.
    init(
        connection: DBusConnection, peers: BusPeers, context: LoopContext, logger: Logger,
        groupOf: @escaping (Int32) -> String?, handler: @escaping (Event) -> Void
    ) {
        self.connection = connection
        self.peers = peers
        self.context = context
        self.logger = logger
        self.groupOf = groupOf
        self.handler = handler
    }

    /// Asks the bus once whether it lets this process monitor (a monitor made and closed again);
    /// `done` gets `nil`, or the bus's refusal.
    func probe(done: @escaping (DBusError?) -> Void) {
        var probe: DBusMonitor?
        probe = DBusMonitor(
            address: connection.address, rules: ["type='method_call',destination='org.notifybus.Lifecycle1.Probe'"],
            context: context
        ) { event in
            switch event {
            case .ready:
                probe?.close()
                probe = nil
                done(nil)
            case .ended(let error):
                probe = nil
                done(error)
            case .message:
                break
            }
        }
    }

    /// Watches the connections of `groups` from now on.
    func watch(_ groups: Set<String>) {
        guard !stopped, groups != wanted else { return }
        wanted = groups
        refresh()
    }

    /// What the peers know changed: the connections to watch may have.
    func peersChanged() {
        guard !stopped, !wanted.isEmpty else { return }
        refresh()
    }

    /// Closes every monitor; nothing is reported after it.
    func stop() {
        stopped = true
        current?.monitor.close()
        next?.monitor.close()
        current = nil
        next = nil
    }

    private func refresh() {
        guard !wanted.isEmpty else {
            current?.monitor.close()
            next?.monitor.close()
            current = nil
            next = nil
            report(.covered([]))
            return
        }
        guard peers.isComplete else { return }
        var destinations: [String: String] = [:]
        for (group, names) in peers.connections(in: wanted, groupOf: groupOf) {
            for name in names { destinations[name] = group }
        }
        if current?.isReady == true, current?.destinations == destinations {
            next?.monitor.close()
            next = nil
            current?.groups = wanted
            report(.covered(wanted))
            return
        }
        if next?.destinations == destinations {
            next?.groups = wanted
            return
        }
        next?.monitor.close()
        next = nil
        guard !destinations.isEmpty else {
            // No connection to watch: nothing can need these cgroups over the bus.
            current?.monitor.close()
            current = nil
            report(.covered(wanted))
            return
        }
        guard refused != destinations else { return }
        let rules = destinations.keys.sorted().flatMap { name in
            ["type='method_call',destination='\(name)'", "type='signal',destination='\(name)'"]
        }
        guard rules.count <= Self.maximumRules else {
            refused = destinations
            report(.failed(reason: "\(destinations.count) connections and names to watch: at most \(Self.maximumRules / 2)"))
            return
        }
        let monitor = DBusMonitor(address: connection.address, rules: rules, context: context) { [weak self] event in
            self?.monitorEvent(event, destinations: destinations)
        }
        next = Watching(monitor: monitor, destinations: destinations, groups: wanted)
    }

    private func monitorEvent(_ event: DBusMonitor.Event, destinations: [String: String]) {
        guard !stopped else { return }
        let isNext = next?.destinations == destinations
        switch event {
        case .ready:
            guard isNext, var ready = next else { return }
            ready.isReady = true
            current?.monitor.close()
            current = ready
            next = nil
            refused = nil
            report(.covered(ready.groups))
        case .message(let header):
            guard header.kind == .methodCall || header.kind == .signal, let destination = header.destination,
                let group = destinations[destination], !isOwn(header.sender)
            else { return }
            handler(.message(group: group))
        case .ended(let error):
            if isNext {
                next = nil
                refused = destinations
                logger.warning("lifecycle: the bus refused to let notifybusd monitor: \(error)")
                report(.failed(reason: "\(error)"))
            } else if current?.destinations == destinations {
                current = nil
                reported = nil
                logger.warning("lifecycle: the monitor connection was lost: \(error)")
                handler(.lost(reason: "\(error)"))
            }
        }
    }

    /// Whether `sender` is one of the daemon's own connections.
    private func isOwn(_ sender: String?) -> Bool {
        guard let sender else { return false }
        return sender == connection.uniqueName?.rawValue || sender == current?.monitor.uniqueName
            || sender == next?.monitor.uniqueName
    }

    private func report(_ event: Event) {
        if case .covered(let groups) = event {
            guard reported != groups else { return }
            reported = groups
        } else {
            reported = nil
        }
        handler(event)
    }
}
