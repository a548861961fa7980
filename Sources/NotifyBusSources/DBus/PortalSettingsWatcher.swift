import DBus
import EpollLoop
import NotifyBus

/// The loop-side part of `PortalSettingsSource`.
final class PortalSettingsWatcher: DBusSourceWatcher<PortalSettingsConfiguration> {
    static let service: BusName = "org.freedesktop.portal.Desktop"
    override static var peers: [DBusPeer] {
        [DBusPeer(
            name: service, path: "/org/freedesktop/portal/desktop", interface: "org.freedesktop.portal.Settings",
            cachesProperties: false)]
    }

    /// The portal's owner, its `ReadAll` and its `SettingChanged` signals.
    private var portal: DBusProxy { proxies[0] }
    /// The keys published from the current portal, to null the ones that disappear.
    private var published: Set<String> = []

    override func watch(in context: LoopContext) {
        portal.onSignal("SettingChanged") { [weak self] signal in self?.settingChanged(signal) }
        portal.onOwnerChange { [weak self] newOwner in self?.ownerChanged(newOwner) }
    }

    /// Activates the portal where it is activatable; its owner's arrival reads again.
    override func connected() {
        readAll(then: {})
    }

    override func reread(then done: @escaping () -> Void) {
        guard canRead else {
            done()
            return
        }
        readAll(then: done)
    }

    private func ownerChanged(_ newOwner: BusName?) {
        guard !stopped else { return }
        if newOwner == nil {
            report(.unavailable(reason: "the portal (\(Self.service)) is not running"))
        } else {
            readAll(then: {})
        }
    }

    private func readAll(then done: @escaping () -> Void) {
        portal.call("ReadAll", arguments: [.strings(configuration.namespaces)]) { [weak self] result in
            defer { done() }
            guard let self, !self.stopped else { return }
            switch result {
            case .success(let values):
                guard values.count == 1, case .dictionary("s", "a{sv}", let namespaces) = values[0] else {
                    self.problem("ReadAll returned '\(values.map(\.signature).joined())', expected 'a{sa{sv}}'; skipped")
                    return
                }
                self.applyAll(namespaces)
                self.report(.running)
            case .failure(let error):
                // Gone, or answered by a former owner: the new one is read when it is known.
                if error.name == DBusError.Name.disconnected || error.name == DBusError.Name.ownerChanged { return }
                if error.meansServiceAbsent {
                    self.problem.note("ReadAll failed: \(error)")
                } else {
                    self.problem("ReadAll failed: \(error)")
                }
                self.report(.unavailable(reason: "the portal (\(Self.service)) cannot be read: \(error)"))
            }
        }
    }

    private func applyAll(_ namespaces: [DBusDictionaryEntry]) {
        var seen: Set<String> = []
        var values: [(key: String, value: JSONValue)] = []
        for entry in namespaces {
            guard case .string(let namespace) = entry.key,
                  PortalSettingsSource.selects(configuration.namespaces, namespace: namespace),
                  case .dictionary(_, _, let settings) = entry.value
            else { continue }
            for setting in settings {
                guard case .string(let name) = setting.key else { continue }
                let key = PortalSettingsSource.key(namespace: namespace, key: name)
                seen.insert(key)
                values.append((key, PortalSettingsSource.json(from: setting.value)))
            }
        }
        values += published.subtracting(seen).sorted().map { ($0, .null) }
        bus.publishSourceValues(values, problem: problem)
        published = seen
    }

    private func settingChanged(_ signal: DBusSignal) {
        guard !stopped else { return }
        guard signal.arguments.count == 3, case .string(let namespace) = signal.arguments[0],
              case .string(let name) = signal.arguments[1], case .variant(let value) = signal.arguments[2]
        else {
            problem("SettingChanged from \(signal.sender) has arguments '\(signal.signature)', expected 'ssv'; skipped", peer: signal.sender.rawValue)
            return
        }
        guard PortalSettingsSource.selects(configuration.namespaces, namespace: namespace) else { return }
        let key = PortalSettingsSource.key(namespace: namespace, key: name)
        published.insert(key)
        bus.publishSourceValue(key, PortalSettingsSource.json(from: value), problem: problem)
    }
}
