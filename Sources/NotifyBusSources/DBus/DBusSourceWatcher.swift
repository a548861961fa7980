import DBus
import EpollLoop
import NotifyBus
import SystemSupport

/// The configuration of a D-Bus source: the bus its peer is on and how to connect to it.
protocol DBusSourceConfiguration: Sendable {
    /// The bus the source's peer is on.
    var address: DBusAddress { get }
    /// Timeouts, and reconnection backoff.
    var connection: DBusConnection.Configuration { get }
}

/// A D-Bus object that a source reads: the name that serves it, its path and its interface.
struct DBusPeer: Sendable {
    let name: BusName
    let path: ObjectPath
    let interface: InterfaceName
    /// Whether its proxy reads and keeps its properties (`GetAll`, `PropertiesChanged`).
    var cachesProperties = true
    /// Whether its owner leaving is followed. Not for a service that exits when idle and is
    /// activated again (localed, timedated): its leaving would wake the source for nothing; its
    /// next owner is followed, and what changed meanwhile the file watch reports.
    var followsDepartures = true
}

/// What every D-Bus source's watcher shares: the bus it publishes to, its configuration and
/// hooks, its connection to the configured D-Bus bus with a proxy for each object it reads, and
/// what it does as that connection comes and goes. Each source's watcher (`LocaleWatcher`,
/// `NetworkWatcher`, …) is a subclass that names its objects (`peers`) and says what it reads.
///
/// The default life of a watcher:
/// - `start(in:)` reports `starting` ("connecting to the <bus>"), follows the connection
///   (`connected()`, `disconnected(_:)`), lets the subclass set up its proxies' handlers
///   (`watch(in:)`), then connects.
/// - On a lost or unreachable bus, `disconnected(_:)` reports `unavailable` ("<bus>
///   unreachable: <error>"); the connection reconnects by itself per its options.
/// - `stop(in:then:)` marks it stopped, ends its file watches (`watchFiles`), lets the subclass
///   let go of what else it holds (`release(in:)`: a session's proxy, a clock), closes the
///   proxies and the connection, and calls `done`.
///
/// Subclasses override those hooks, or `start(in:)` and `stop(in:then:)` themselves where
/// their life differs (the sensors' claims, the time source's clock). Like every watcher, it
/// lives and dies on its source's loop thread.
class DBusSourceWatcher<Configuration: DBusSourceConfiguration>: ConfiguredWatcher {
    /// The objects the source reads, in the order of `proxies`.
    class var peers: [DBusPeer] { [] }

    /// Where it publishes.
    let bus: NotificationBus
    /// The source's configuration.
    let configuration: Configuration
    /// The loop it lives on.
    unowned let context: LoopContext
    /// Makes a status current.
    let report: (SourceStatus) -> Void
    /// Logs what was skipped.
    let problem: SourceProblems
    /// The connection to `configuration.address`.
    let connection: DBusConnection
    /// A proxy on `connection` for each of `peers`, made before anything else registers on the
    /// connection (so that their own handlers run first).
    let proxies: [DBusProxy]
    /// Whether it was stopped: what still arrives then is ignored.
    private(set) var stopped = false
    /// The files it watches, if any (`watchFiles`).
    private var files: FileChangeWatcher?

    required init(bus: NotificationBus, configuration: Configuration, context: LoopContext, hooks: SourceHooks) {
        self.bus = bus
        self.configuration = configuration
        self.context = context
        report = hooks.report
        problem = hooks.problem
        let connection = DBusConnection(
            address: configuration.address, context: context, configuration: configuration.connection)
        self.connection = connection
        proxies = Self.peers.map { peer in
            DBusProxy(
                connection: connection, destination: peer.name, path: peer.path, interface: peer.interface,
                cachesProperties: peer.cachesProperties, followsDepartures: peer.followsDepartures)
        }
    }

    /// Whether it can ask its peer now: not stopped, and connected.
    var canRead: Bool { !stopped && connection.isConnected }

    // MARK: Life

    func start(in context: LoopContext) {
        report(.starting(reason: "connecting to the \(configuration.address)"))
        connection.onMatchRuleFailure { [problem] rule, error in problem("the bus refused the match rule \(rule): \(error)") }
        followConnection()
        watch(in: context)
        connection.connect()
    }

    func stop(in context: LoopContext, then done: @escaping () -> Void) {
        stopped = true
        files?.stop()
        files = nil
        release(in: context)
        for proxy in proxies { proxy.close() }
        connection.close()
        done()
    }

    func reread(then done: @escaping () -> Void) {
        done()
    }

    // MARK: Hooks for the subclass

    /// Sets up what the source watches (its proxies' handlers, file watches) before connecting.
    func watch(in context: LoopContext) {}

    /// Registered on the bus (at start and after every reconnection).
    func connected() {}

    /// The bus went away or could not be reached: the source is unavailable until it is back.
    func disconnected(_ error: DBusError) {
        report(.unavailable(reason: "\(configuration.address) unreachable: \(error)"))
    }

    /// Lets go of what else the subclass holds (a proxy of its own, a clock), before the proxies
    /// and the connection close.
    func release(in context: LoopContext) {}

    // MARK: For the subclass

    /// Calls `connected()` and `disconnected(_:)` at each change of the connection's state.
    func followConnection() {
        connection.onStateChange { [weak self] state in
            guard let self else { return }
            switch state {
            case .connected: self.connected()
            case .disconnected(let error): self.disconnected(error)
            default: break
            }
        }
    }

    /// Watches `paths` for edits until it stops (`FileChangeWatcher`): `changed` runs after each
    /// burst of them. When they cannot be watched, logs "cannot watch `what`: <why>".
    func watchFiles(_ paths: [String], naming what: String, in context: LoopContext, changed: @escaping () -> Void) {
        files = FileChangeWatcher(paths: paths, context: context, handler: changed)
        if let problem = files?.problem { self.problem("cannot watch \(what): \(problem)") }
    }

    /// A read of `peer` failed: logged (at `debug` when the service is not there), and the source
    /// unavailable ("`daemon` (`peer`) cannot be read"). Nothing when the owner changed
    /// meanwhile: the new owner is read next.
    func readFailed(_ error: DBusError, peer: BusName, daemon: String) {
        if error.name == DBusError.Name.ownerChanged { return }
        if error.meansServiceAbsent {
            problem.note("reading \(peer) failed: \(error)", peer: peer.rawValue)
        } else {
            problem("reading \(peer) failed: \(error)", peer: peer.rawValue)
        }
        report(.unavailable(reason: "\(daemon) (\(peer)) cannot be read: \(error)"))
    }
}

extension DBusError {
    /// Whether the error says that the service is not there: its name has no owner and cannot be
    /// activated (`ServiceUnknown`, `NameHasNoOwner`), or is activated through a systemd unit that
    /// is not installed or is masked. Normal on a machine without that daemon.
    var meansServiceAbsent: Bool {
        [
            Name.serviceUnknown, Name.nameHasNoOwner,
            "org.freedesktop.systemd1.NoSuchUnit", "org.freedesktop.systemd1.UnitMasked",
        ].contains(name)
    }
}
