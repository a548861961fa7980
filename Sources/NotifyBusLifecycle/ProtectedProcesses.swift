package import DBus
package import Logging

/// The processes that must never be frozen, on a session bus: the owners of the desktop's
/// shared services (the portal, the notification daemon, the secret service, the accessibility
/// bus) and the session bus daemon itself. Freezing one of them would hang every app that
/// calls it.
///
/// Each name's owner is followed (`DBusConnection.nameOwners(of:handler:)`: `GetNameOwner`,
/// then `NameOwnerChanged`), and the owner's process asked of the bus daemon
/// (`GetConnectionUnixProcessID`, asynchronous); the bus daemon's own process is
/// `GetConnectionUnixProcessID("org.freedesktop.DBus")`, which it answers itself. Nothing is
/// ever asked of the services themselves.
///
/// - `onChange` gets the whole set each time it changes (not the first, empty one): a process
///   is in it once its name's owner and that owner's process are known, and leaves it when the
///   name changes owner or has none.
/// - The connection: it may be connected already or not yet; the names are followed across
///   reconnections (their owners and processes are asked again). While disconnected the last
///   set stays.
///
/// Loop-confined like its connection: create it, use it and stop it on the connection's loop
/// thread; `onChange` runs there.
package final class ProtectedProcesses {
    /// The names whose owners are protected by default: `org.freedesktop.portal.Desktop`,
    /// `org.freedesktop.Notifications`, `org.freedesktop.secrets`, `org.a11y.Bus`.
    package static let defaultNames: [BusName] = [
        "org.freedesktop.portal.Desktop", "org.freedesktop.Notifications", "org.freedesktop.secrets", "org.a11y.Bus",
    ]

    /// The connection it follows the names on.
    package let connection: DBusConnection
    /// The names whose owners it protects (the bus daemon's process is protected too).
    package let names: [BusName]
    /// The protected processes, as last reported.
    package var processes: Set<Int32> { reported.processes }
    private var reported = ReportedProcesses()

    private let logger: Logger
    private let onChange: (Set<Int32>) -> Void
    private var state = State()
    private let handlers: DBusHandlerSet
    private var stopped = false

    /// Starts following the owners of `names` and the bus daemon on `connection` (at once when
    /// connected, else once it connects); `onChange` gets the set of their processes each time
    /// it changes.
    package init(
        connection: DBusConnection, logger: Logger, names: [BusName] = ProtectedProcesses.defaultNames,
        onChange: @escaping (Set<Int32>) -> Void
    ) {
        self.connection = connection
        handlers = DBusHandlerSet(connection: connection)
        self.logger = logger
        self.onChange = onChange
        var unique: [BusName] = []
        for name in names where name != .bus && !unique.contains(name) { unique.append(name) }
        self.names = unique
        handlers.add(connection.onStateChange { [weak self] state in
            if case .connected = state { self?.ownerChanged(.bus, to: .bus) }
        })
        for name in unique {
            handlers.add(connection.nameOwners(of: name) { [weak self] owner in self?.ownerChanged(name, to: owner) })
        }
        if connection.isConnected { ownerChanged(.bus, to: .bus) }
    }

    /// Stops following the names: their watches are cancelled, and nothing is reported any more.
    package func stop() {
        guard !stopped else { return }
        stopped = true
        handlers.cancelAll()
        state.reset()
    }

    private func ownerChanged(_ name: BusName, to owner: BusName?) {
        guard !stopped else { return }
        logger.debug("\(name) is owned by \(owner?.rawValue ?? "nobody")")
        let lookup = state.ownerChanged(name, to: owner)
        publish()
        guard let lookup else { return }
        connection.processID(of: lookup.owner) { [weak self] result in
            guard let self, !self.stopped else { return }
            if case .failure(let error) = result { self.logger.debug("no process ID for \(lookup.owner) (\(name)): \(error)") }
            self.state.processLookedUp(lookup, processID: try? result.get())
            self.publish()
        }
    }

    /// Reports the set when it changed.
    private func publish() {
        guard !stopped, let now = reported.change(to: state.processes) else { return }
        onChange(now)
    }
}
