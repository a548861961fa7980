import DBus
import EpollLoop
import NotifyBus

/// The loop-side part of `PowerProfileSource`: one proxy per name, the new one preferred.
final class PowerProfileWatcher: DBusSourceWatcher<PowerProfileConfiguration> {
    /// The names in order of preference, with their objects and interfaces: one proxy each.
    override static var peers: [DBusPeer] {
        [
            DBusPeer(
                name: "org.freedesktop.UPower.PowerProfiles", path: "/org/freedesktop/UPower/PowerProfiles",
                interface: "org.freedesktop.UPower.PowerProfiles"),
            DBusPeer(name: "net.hadess.PowerProfiles", path: "/net/hadess/PowerProfiles", interface: "net.hadess.PowerProfiles"),
        ]
    }
    static let key = "power/profile"

    override func watch(in context: LoopContext) {
        for proxy in proxies {
            proxy.onOwnerChange { [weak self] _ in self?.ownersChanged() }
            proxy.onPropertiesChange { [weak self, unowned proxy] event in self?.propertiesEvent(event, from: proxy) }
        }
    }

    override func reread(then done: @escaping () -> Void) {
        guard canRead, let proxy = active else {
            done()
            return
        }
        proxy.reloadProperties(then: done)
    }

    /// The proxy whose value counts: the first name with an owner, once every owner before it
    /// is known to be absent; `nil` while none is served or not yet known.
    private var active: DBusProxy? { proxies.preferredServed }

    private func ownersChanged() {
        guard !stopped else { return }
        guard proxies.ownersKnown || active != nil else { return }
        guard let proxy = active else {
            let names = Self.peers.map(\.name.rawValue).joined(separator: ", ")
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
        case .loaded, .changed:
            if let properties = proxy.properties(following: "ActiveProfile", in: event) { apply(properties, from: proxy) }
        case .loadFailed(let error):
            readFailed(error, peer: proxy.destination, daemon: "power-profiles-daemon")
        case .malformedSignal(let error):
            problem("unexpected signal: \(error)", peer: proxy.destination.rawValue)
        }
    }

    /// The values of `power/profile`: the profiles power-profiles-daemon defines.
    static let profiles = ["power-saver", "balanced", "performance"]

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
        guard Self.profiles.contains(profile) else {
            problem("ActiveProfile is '\(profile)', not one of \(Self.profiles.joined(separator: ", ")); skipped", peer: proxy.destination.rawValue)
            report(.running)
            return
        }
        bus.publishSourceValue(Self.key, .string(profile), problem: problem)
        report(.running)
    }
}
