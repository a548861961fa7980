import DBus
import EpollLoop
import NotifyBus

/// The loop-side part of `NetworkSource`.
final class NetworkWatcher: ConfiguredWatcher {
    static let service: BusName = "org.freedesktop.NetworkManager"
    static let path: ObjectPath = "/org/freedesktop/NetworkManager"
    static let interface: InterfaceName = "org.freedesktop.NetworkManager"

    private let bus: NotificationBus
    private let configuration: NetworkSource.Configuration
    private let report: (SourceStatus) -> Void
    private let problem: SourceProblems
    private let connection: DBusConnection
    /// NetworkManager's owner and properties.
    private let manager: DBusProxy
    private var stopped = false

    init(
        bus: NotificationBus, configuration: NetworkSource.Configuration, context: LoopContext,
        report: @escaping (SourceStatus) -> Void, problem: SourceProblems
    ) {
        self.bus = bus
        self.configuration = configuration
        self.report = report
        self.problem = problem
        connection = DBusConnection(address: configuration.address, context: context, configuration: configuration.connection)
        manager = DBusProxy(connection: connection, destination: Self.service, path: Self.path, interface: Self.interface)
    }

    func start(in context: LoopContext) {
        report(.starting(reason: "connecting to the \(configuration.address)"))
        connection.onStateChange { [weak self] state in
            guard let self, case .disconnected(let error) = state else { return }
            self.report(.unavailable(reason: "\(self.configuration.address) unreachable: \(error)"))
        }
        manager.onOwnerChange { [weak self] owner in
            guard let self, !self.stopped, owner == nil else { return }
            self.report(.unavailable(reason: "NetworkManager (\(Self.service)) is not running"))
        }
        manager.onPropertiesChange { [weak self] event in self?.propertiesEvent(event) }
        connection.connect()
    }

    func stop(in context: LoopContext, then done: @escaping () -> Void) {
        stopped = true
        manager.close()
        connection.close()
        done()
    }

    func reread(then done: @escaping () -> Void) {
        guard !stopped, connection.isConnected, manager.owner != nil else {
            done()
            return
        }
        manager.reloadProperties(then: done)
    }

    private func propertiesEvent(_ event: DBusProxy.PropertiesEvent) {
        guard !stopped else { return }
        switch event {
        case .loaded(let properties):
            apply("Connectivity", properties["Connectivity"] ?? .uint32(0))
            apply("Metered", properties["Metered"] ?? .uint32(0))
            report(.running)
        case .changed(let change):
            for name in ["Connectivity", "Metered"] {
                if let value = change.changed[name] {
                    apply(name, value)
                } else if change.invalidated.contains(name) {
                    manager.reloadProperties()
                }
            }
        case .loadFailed(let error):
            if error.name == DBusError.Name.ownerChanged { return }
            problem("reading \(Self.service) failed: \(error)", peer: Self.service.rawValue)
            report(.unavailable(reason: "NetworkManager (\(Self.service)) cannot be read: \(error)"))
        case .malformedSignal(let error):
            problem("unexpected signal: \(error)", peer: Self.service.rawValue)
        }
    }

    private func apply(_ property: String, _ value: DBusValue) {
        let key = property == "Connectivity" ? "network/connectivity" : "network/metered"
        guard case .uint32(let state) = value else {
            problem("\(property) has type '\(value.signature)' (\(value)), expected 'u'; skipped", key: key, peer: Self.service.rawValue)
            return
        }
        bus.publishIfChanged(
            key, property == "Connectivity" ? .string(NetworkSource.connectivity(state)) : NetworkSource.metered(state))
    }
}
