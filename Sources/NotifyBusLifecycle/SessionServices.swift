import DBus
import Logging
import NotifyBusProtocol
import SystemSupport

/// What the lifecycle follows on the session bus, on the driver's loop thread: the protected
/// names' owners and the bus daemon, the MPRIS players, the systemd user manager, the bus's
/// connections and the wake watch on them, and the peers that leave (whose background tasks
/// end). Made and stopped by the driver.
final class SessionServices {
    let connection: DBusConnection
    let units: SystemdUnits
    let peers: BusPeers
    let wake: WakeWatch
    private let protectedNames: ProtectedProcesses
    private let players: MediaPlayers
    private let handlers: DBusHandlerSet
    private let logger: Logger

    init(driver: LifecycleDriver, connection: DBusConnection) {
        self.connection = connection
        logger = driver.logger
        handlers = DBusHandlerSet(connection: connection)
        protectedNames = ProtectedProcesses(connection: connection, logger: driver.logger) { [weak driver] pids in
            driver?.protect(pids, as: "session")
        }
        players = MediaPlayers(connection: connection, logger: driver.logger) { [weak driver] pids in driver?.setPlaying(pids) }
        units = SystemdUnits(connection: connection, logger: driver.logger)
        let peers = BusPeers(connection: connection, logger: driver.logger)
        self.peers = peers
        wake = WakeWatch(
            connection: connection, peers: peers, context: driver.context, logger: driver.logger,
            groupOf: { ControlGroup.group(ofProcess: $0) }
        ) { [weak driver] event in driver?.wakeEvent(event) }
        peers.onChange = { [weak wake, weak driver] in
            wake?.peersChanged()
            driver?.busPeersChanged()
        }
        handlers.add(connection.peersLeaving { [weak driver] name in driver?.handle(.connectionLeft(name.rawValue)) })
    }

    /// Lets go of everything on the bus.
    func stop() {
        handlers.cancelAll()
        wake.stop()
        peers.stop()
        protectedNames.stop()
        players.stop()
        units.stop()
    }

    /// `BackgroundTaskExpiring(task, seconds)` to the task's connection.
    func expiring(task: UInt32, connection name: String, seconds: UInt32) {
        guard let destination = BusName(rawValue: name) else { return }
        do {
            try connection.emitSignal(
                path: BusInterface.path, interface: LifecycleInterface.interface, member: LifecycleInterface.backgroundTaskExpiring,
                arguments: [.uint32(task), .uint32(seconds)], destination: destination)
        } catch {
            logger.warning("lifecycle: cannot tell \(name) that task \(task) expires: \(error)")
        }
    }
}

extension LifecycleDriver {
    /// What the wake watch saw.
    func wakeEvent(_ event: WakeWatch.Event) {
        switch event {
        case .covered(let groups):
            freezeStep(.covered(groups))
        case .message(let group):
            handle(.message(group: group))
        case .failed(let reason):
            freezeStep(.coverFailed(reason: reason))
        case .lost:
            handle(.wakeWatchLost)
        }
    }
}
