import DBus
import EpollLoop
import NotifyBus

/// The loop-side part of `PowerProfileSource`: one proxy per name, the new one preferred.
final class PowerProfileWatcher: ConfiguredWatcher {
    /// The names in order of preference, with their objects and interfaces.
    static let services: [(name: BusName, path: ObjectPath, interface: InterfaceName)] = [
        ("org.freedesktop.UPower.PowerProfiles", "/org/freedesktop/UPower/PowerProfiles", "org.freedesktop.UPower.PowerProfiles"),
        ("net.hadess.PowerProfiles", "/net/hadess/PowerProfiles", "net.hadess.PowerProfiles"),
    ]
    static let key = "power/profile"

    private let bus: NotificationBus
    private let configuration: PowerProfileSource.Configuration
    private let report: (SourceStatus) -> Void
    private let problem: SourceProblems
    private let connection: DBusConnection
    /// The daemon under each name, in the order of `services`.
    private let proxies: [DBusProxy]
    private var stopped = false

    init(
        bus: NotificationBus, configuration: PowerProfileSource.Configuration, context: LoopContext,
        report: @escaping (SourceStatus) -> Void, problem: SourceProblems
    ) {
        self.bus = bus
        self.configuration = configuration
        self.report = report
        self.problem = problem
        let connection = DBusConnection(address: configuration.address, context: context, configuration: configuration.connection)
        self.connection = connection
        proxies = Self.services.map { service in
            DBusProxy(connection: connection, destination: service.name, path: service.path, interface: service.interface)
        }
    }

    func start(in context: LoopContext) {
        report(.starting(reason: "connecting to the \(configuration.address)"))
        connection.onStateChange { [weak self] state in
            guard let self, case .disconnected(let error) = state else { return }
            self.report(.unavailable(reason: "\(self.configuration.address) unreachable: \(error)"))
        }
        for proxy in proxies {
            proxy.onOwnerChange { [weak self] _ in self?.ownersChanged() }
            proxy.onPropertiesChange { [weak self, unowned proxy] event in self?.propertiesEvent(event, from: proxy) }
        }
        connection.connect()
    }

    func stop(in context: LoopContext, then done: @escaping () -> Void) {
        stopped = true
        for proxy in proxies { proxy.close() }
        connection.close()
        done()
    }

    func reread(then done: @escaping () -> Void) {
        guard !stopped, connection.isConnected, let proxy = active else {
            done()
            return
        }
        proxy.reloadProperties(then: done)
    }

    /// The proxy whose value counts: the first name with an owner, once every owner before it
    /// is known to be absent; `nil` while none is served or not yet known.
    private var active: DBusProxy? {
        for proxy in proxies {
            guard proxy.isOwnerKnown else { return nil }
            if proxy.owner != nil { return proxy }
        }
        return nil
    }

    private func ownersChanged() {
        guard !stopped else { return }
        guard proxies.allSatisfy(\.isOwnerKnown) || active != nil else { return }
        guard let proxy = active else {
            let names = Self.services.map(\.name.rawValue).joined(separator: ", ")
            report(.unavailable(reason: "power-profiles-daemon (\(names)) is not running"))
            return
        }
        // A name that just got its owner is being read (its answer comes as `loaded`); one that
        // was served all along has its value already.
        if !proxy.properties.isEmpty { apply(proxy.properties, from: proxy) }
    }

    private func propertiesEvent(_ event: DBusProxy.PropertiesEvent, from proxy: DBusProxy) {
        guard !stopped, proxy === active else { return }
        switch event {
        case .loaded(let properties):
            apply(properties, from: proxy)
        case .changed(let change):
            if change.changed["ActiveProfile"] != nil {
                apply(change.changed, from: proxy)
            } else if change.invalidated.contains("ActiveProfile") {
                proxy.reloadProperties()
            }
        case .loadFailed(let error):
            if error.name == DBusError.Name.ownerChanged { return }
            problem("reading \(proxy.destination) failed: \(error)", peer: proxy.destination.rawValue)
            report(.unavailable(reason: "power-profiles-daemon (\(proxy.destination)) cannot be read: \(error)"))
        case .malformedSignal(let error):
            problem("unexpected signal: \(error)", peer: proxy.destination.rawValue)
        }
    }

    private func apply(_ properties: [String: DBusValue], from proxy: DBusProxy) {
        guard let value = properties["ActiveProfile"] else {
            problem("\(proxy.destination) has no ActiveProfile; skipped", peer: proxy.destination.rawValue)
            report(.running)
            return
        }
        guard case .string(let profile) = value else {
            problem("ActiveProfile has type '\(value.signature)' (\(value)), expected 's'; skipped", peer: proxy.destination.rawValue)
            report(.running)
            return
        }
        bus.publishIfChanged(Self.key, .string(profile))
        report(.running)
    }
}
