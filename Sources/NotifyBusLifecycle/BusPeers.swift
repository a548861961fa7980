import DBus
import Logging

/// Every connection on a session bus, with its process and the well-known names it owns, as the
/// bus daemon tells them: `ListNames` once connected, then `NameOwnerChanged` (one match rule for
/// every name), each connection's process by `GetConnectionCredentials` and each well-known name's
/// owner by `GetNameOwner`, all asynchronous. Nothing is ever asked of the connections themselves.
///
/// What the lifecycle needs it for: the connections of a cgroup, known before the cgroup is
/// frozen (so that a message to any of them can thaw it), and the process owning an app id's
/// name. `onChange` runs after each change of what it knows.
///
/// Loop-confined like its connection: create it, use it and stop it on the connection's loop
/// thread; `onChange` runs there.
final class BusPeers {
    private let connection: DBusConnection
    private let logger: Logger
    private let handlers: DBusHandlerSet
    private var state = State()
    /// Bumped on every reconnection: answers to an older round are dropped.
    private var round: UInt64 = 0
    private var stopped = false
    var onChange: () -> Void = {}

    /// Starts following `connection`'s bus (at once when connected, else once it connects).
    init(connection: DBusConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
        handlers = DBusHandlerSet(connection: connection)
        handlers.add(connection.signals(matching: DBusMatchRule(sender: .bus, path: .bus, interface: .bus, member: "NameOwnerChanged")) {
            [weak self] signal in
            guard signal.arguments.count == 3, let name = signal.arguments[0].stringValue,
                let old = signal.arguments[1].stringValue, let new = signal.arguments[2].stringValue
            else { return }
            self?.apply { $0.ownerChanged(name, from: old, to: new) }
        })
        handlers.add(connection.onStateChange { [weak self] state in
            if case .connected = state { self?.list() }
        })
        if connection.isConnected { list() }
    }

    /// Stops following the bus.
    func stop() {
        stopped = true
        handlers.cancelAll()
    }

    /// Whether every connection's process and every name's owner is known.
    var isComplete: Bool { state.isComplete }

    /// The connections whose process is in one of `groups` (cgroups in the `0::` form, or below
    /// one), each with the well-known names it owns, by cgroup; `groupOf` tells a process's cgroup.
    func connections(in groups: Set<String>, groupOf: (Int32) -> String?) -> [String: [String]] {
        guard !groups.isEmpty else { return [:] }
        let names = state.namesOfPeers
        var found: [String: [String]] = [:]
        for (unique, peer) in state.peers {
            guard let pid = peer.processID, let group = groupOf(pid),
                let owner = groups.first(where: { group == $0 || group.hasPrefix($0 + "/") })
            else { continue }
            found[owner, default: []].append(unique)
            found[owner, default: []].append(contentsOf: names[unique] ?? [])
        }
        return found
    }

    /// The owner of the well-known name `name` and its process, where known.
    func owner(of name: String) -> (unique: String, processID: Int32?)? {
        state.owner(of: name)
    }

    private func list() {
        round &+= 1
        let round = self.round
        state.reset()
        connection.call(destination: .bus, path: .bus, interface: .bus, member: "ListNames") { [weak self] result in
            guard let self, !self.stopped, self.round == round else { return }
            switch result {
            case .success(let values):
                let names = values.first?.arrayElements?.compactMap(\.stringValue) ?? []
                self.apply { $0.listed(names) }
            case .failure(let error):
                self.logger.warning("lifecycle: ListNames failed: \(error)")
            }
        }
    }

    private func apply(_ change: (inout State) -> [State.Lookup]) {
        guard !stopped else { return }
        let lookups = change(&state)
        onChange()
        let round = self.round
        for lookup in lookups {
            switch lookup {
            case .process(let name):
                guard let bus = BusName(rawValue: name) else { continue }
                connection.credentials(of: bus) { [weak self] result in
                    guard let self, !self.stopped, self.round == round else { return }
                    self.state.processLookedUp(name, processID: (try? result.get())?.processID)
                    self.onChange()
                }
            case .owner(let name):
                connection.call(
                    destination: .bus, path: .bus, interface: .bus, member: "GetNameOwner", arguments: [.string(name)]
                ) { [weak self] result in
                    guard let self, !self.stopped, self.round == round else { return }
                    self.state.ownerLookedUp(name, owner: (try? result.get())?.first?.stringValue)
                    self.onChange()
                }
            }
        }
    }
}
