import DBus
import EpollLoop
import NotifyBus

/// The loop-side part of `NetworkSource`.
final class NetworkWatcher: DBusSourceWatcher<NetworkConfiguration> {
    static let service: BusName = "org.freedesktop.NetworkManager"
    override static var peers: [DBusPeer] {
        [DBusPeer(name: service, path: "/org/freedesktop/NetworkManager", interface: "org.freedesktop.NetworkManager")]
    }

    /// NetworkManager's owner and properties.
    private var manager: DBusProxy { proxies[0] }

    override func watch(in context: LoopContext) {
        manager.onOwnerChange { [weak self] owner in
            guard let self, !self.stopped, owner == nil else { return }
            self.report(.unavailable(reason: "NetworkManager (\(Self.service)) is not running"))
        }
        manager.onPropertiesChange { [weak self] event in self?.propertiesEvent(event) }
    }

    override func reread(then done: @escaping () -> Void) {
        guard canRead, manager.owner != nil else {
            done()
            return
        }
        manager.reloadProperties(then: done)
    }

    private func propertiesEvent(_ event: DBusProxy.PropertiesEvent) {
        guard !stopped else { return }
        switch event {
        case .loaded(let properties):
            publish([
                value(of: "Connectivity", properties["Connectivity"] ?? .uint32(0)),
                value(of: "Metered", properties["Metered"] ?? .uint32(0)),
            ])
            report(.running)
        case .changed(let change):
            var values: [(key: String, value: JSONValue)?] = []
            for name in ["Connectivity", "Metered"] {
                if let value = change.changed[name] {
                    values.append(self.value(of: name, value))
                } else if change.invalidated.contains(name) {
                    manager.reloadProperties()
                }
            }
            publish(values)
        case .loadFailed(let error):
            readFailed(error, peer: Self.service, daemon: "NetworkManager")
        case .malformedSignal(let error):
            problem("unexpected signal: \(error)", peer: Self.service.rawValue)
        }
    }

    /// The key and value of one property, or nil (a problem reported) when it has the wrong type.
    private func value(of property: String, _ value: DBusValue) -> (key: String, value: JSONValue)? {
        let key = property == "Connectivity" ? "network/connectivity" : "network/metered"
        guard case .uint32(let state) = value else {
            problem("\(property) has type '\(value.signature)' (\(value)), expected 'u'; skipped", key: key, peer: Self.service.rawValue)
            return nil
        }
        return (key, property == "Connectivity" ? .string(NetworkSource.connectivity(state)) : NetworkSource.metered(state))
    }

    /// Publishes the values of one reading of the properties together.
    private func publish(_ values: [(key: String, value: JSONValue)?]) {
        bus.publishSourceValues(values.compactMap { $0 }, problem: problem)
    }
}
