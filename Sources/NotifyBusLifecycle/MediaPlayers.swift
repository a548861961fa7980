package import DBus
package import Logging

/// The processes whose MPRIS media players are playing, on a session bus: a playing app is not
/// frozen, even in the background.
///
/// It follows every `org.mpris.MediaPlayer2.*` name (`ListNames` once connected, then
/// `NameOwnerChanged`) and, for each connection that owns one (a player), its process
/// (`GetConnectionUnixProcessID`, answered by the bus daemon) and its `PlaybackStatus`
/// (property of `org.mpris.MediaPlayer2.Player` at `/org/mpris/MediaPlayer2`): read once with
/// an asynchronous `Get` to the player's unique name, then followed through its
/// `PropertiesChanged` signals. It never blocks on a player: a frozen or hung one just has no
/// answer yet (the `Get` times out after `timeout`), and the others go on.
///
/// - A player is playing while its last `PlaybackStatus` is the string `"Playing"`; one that
///   has not answered yet, answered with an error, or released its names is not. A value of
///   another type counts as not playing and is logged once per player.
/// - Bounded: at most `maximumPlayers` players are followed (a connection owning many player
///   names is one player, with at most 8 of its names kept); past that, new ones are ignored and
///   the first skip logged. The owners of the player names `ListNames` gives are asked 16 at a
///   time, of at most 4096 names. One match rule for every `NameOwnerChanged`, one for every
///   player's `PropertiesChanged`, whatever the number of players.
/// - The connection: it may be connected already or not yet; after every (re)connection
///   everything is read again from scratch. While disconnected the last set stays.
///
/// Loop-confined like its connection: create it, use it and stop it on the connection's loop
/// thread; `onChange` runs there.
package final class MediaPlayers {
    /// The object every MPRIS player serves.
    package static let objectPath: ObjectPath = "/org/mpris/MediaPlayer2"
    /// The interface of `PlaybackStatus`.
    package static let playerInterface: InterfaceName = "org.mpris.MediaPlayer2.Player"

    /// The connection it follows the players on.
    package let connection: DBusConnection
    /// The processes whose players are playing, as last reported.
    package var playingProcesses: Set<Int32> { reported.processes }
    private var reported = ReportedProcesses()

    private let logger: Logger
    private let timeout: Duration
    private let onChange: (Set<Int32>) -> Void
    private var state: State
    /// Bumped at every (re)connection: answers to questions asked before are dropped.
    private var generation: UInt64 = 0
    private let handlers: DBusHandlerSet
    private var stopped = false

    /// Starts following the players on `connection` (at once when connected, else once it
    /// connects); `onChange` gets the set of processes whose players are playing each time it
    /// changes (not the first, empty one). `timeout` bounds each call to a player.
    package init(
        connection: DBusConnection, logger: Logger, maximumPlayers: Int = 256, timeout: Duration = .seconds(5),
        onChange: @escaping (Set<Int32>) -> Void
    ) {
        self.connection = connection
        handlers = DBusHandlerSet(connection: connection)
        self.logger = logger
        self.timeout = timeout
        self.onChange = onChange
        state = State(maximumPlayers: maximumPlayers)
        handlers.add(connection.onStateChange { [weak self] state in
            if case .connected = state { self?.restart() }
        })
        handlers.add(connection.signals(matching: DBusMatchRule(
            sender: .bus, path: .bus, interface: .bus, member: "NameOwnerChanged")) { [weak self] signal in
            self?.nameOwnerChanged(signal)
        })
        handlers.add(connection.signals(matching: .propertiesChanged(
            sender: nil, path: Self.objectPath, interface: Self.playerInterface)) { [weak self] signal in
            self?.propertiesChanged(signal)
        })
        if connection.isConnected { restart() }
    }

    /// Stops following the players: its match rules are removed, and nothing is reported any more.
    package func stop() {
        guard !stopped else { return }
        stopped = true
        handlers.cancelAll()
        state.reset()
    }

    // MARK: Events

    /// Connected (again): everything is read from scratch.
    private func restart() {
        guard !stopped else { return }
        generation &+= 1
        state.reset()
        publish()
        let current = generation
        connection.call(destination: .bus, path: .bus, interface: .bus, member: "ListNames") { [weak self] result in
            guard let self, !self.stopped, self.generation == current else { return }
            switch result {
            case .success(let values):
                guard let names = values.first?.stringArray else {
                    self.logger.warning("ListNames answered '\(values.map(\.signature).joined())', expected 'as'")
                    return
                }
                self.perform(self.state.listed(names))
            case .failure(let error):
                self.logger.debug("ListNames failed: \(error)")
            }
        }
    }

    private func nameOwnerChanged(_ signal: DBusSignal) {
        guard !stopped, signal.arguments.count == 3, case .string(let name) = signal.arguments[0],
              case .string(let newOwner) = signal.arguments[2]
        else { return }
        // Most names are neither players nor players leaving: nothing to do for them.
        guard MediaPlayers.State.isPlayerName(name) || (name.hasPrefix(":") && newOwner.isEmpty) else { return }
        perform(state.ownerChanged(name: name, newOwner: newOwner))
    }

    private func propertiesChanged(_ signal: DBusSignal) {
        guard !stopped, state.players[signal.sender] != nil else { return }
        do throws(DBusError) {
            let change = try DBusPropertiesChange(signal)
            perform(state.propertiesChanged(sender: signal.sender, changed: change.changed, invalidated: change.invalidated))
        } catch {
            logger.debug("skipped a PropertiesChanged from \(signal.sender): \(error)")
        }
    }

    // MARK: Effects

    private func perform(_ effects: [State.Effect]) {
        for effect in effects {
            guard !stopped else { return }
            switch effect {
            case .lookUpOwner(let name): lookUpOwner(name)
            case .lookUpProcess(let owner, let serial): lookUpProcess(owner, serial: serial)
            case .readStatus(let owner, let serial): readStatus(owner, serial: serial)
            case .warn(let message): logger.warning("\(message)")
            case .note(let message): logger.debug("\(message)")
            }
        }
        publish()
    }

    private func lookUpOwner(_ name: BusName) {
        let current = generation
        connection.call(
            destination: .bus, path: .bus, interface: .bus, member: "GetNameOwner", arguments: [.string(name.rawValue)]
        ) { [weak self] result in
            guard let self, !self.stopped, self.generation == current else { return }
            var owner: BusName?
            if case .success(let values) = result, let text = values.first?.stringValue { owner = BusName(rawValue: text) }
            self.perform(self.state.ownerLookedUp(name, owner: owner))
        }
    }

    private func lookUpProcess(_ owner: BusName, serial: UInt64) {
        let current = generation
        connection.processID(of: owner) { [weak self] result in
            guard let self, !self.stopped, self.generation == current else { return }
            self.perform(self.state.processLookedUp(owner: owner, serial: serial, processID: try? result.get()))
        }
    }

    private func readStatus(_ owner: BusName, serial: UInt64) {
        let current = generation
        connection.getProperty(
            destination: owner, path: Self.objectPath, interface: Self.playerInterface, name: "PlaybackStatus",
            timeout: timeout
        ) { [weak self] result in
            guard let self, !self.stopped, self.generation == current else { return }
            switch result {
            case .success(let value): self.perform(self.state.statusRead(owner: owner, serial: serial, value: value))
            case .failure(let error): self.perform(self.state.statusFailed(owner: owner, serial: serial, error: error))
            }
        }
    }

    /// Reports the set when it changed.
    private func publish() {
        guard !stopped, let now = reported.change(to: state.playingProcesses) else { return }
        onChange(now)
    }
}
