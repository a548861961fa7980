import DBus
import EpollLoop
import NotifyBus

/// The loop-side part of `PortalSettingsSource`.
final class PortalSettingsWatcher: ConfiguredWatcher {
    static let service = "org.freedesktop.portal.Desktop"
    static let path = "/org/freedesktop/portal/desktop"
    static let interface = "org.freedesktop.portal.Settings"

    private let bus: NotificationBus
    private let configuration: PortalSettingsSource.Configuration
    private let report: (SourceStatus) -> Void
    private let problem: SourceProblems
    private let connection: DBusConnection
    /// The keys published from the current portal, to null the ones that disappear.
    private var published: Set<String> = []
    private var owner: String?
    /// Whether the bus has told us the owner (none included) since we connected: a first
    /// "no owner" must be reported too, though it equals the `nil` we start with.
    private var ownerKnown = false
    private var epoch = 0
    private var stopped = false

    init(
        bus: NotificationBus, configuration: PortalSettingsSource.Configuration, context: LoopContext,
        report: @escaping (SourceStatus) -> Void, problem: SourceProblems
    ) {
        self.bus = bus
        self.configuration = configuration
        self.report = report
        self.problem = problem
        connection = DBusConnection(address: configuration.address, context: context, configuration: configuration.connection)
    }

    func start(in context: LoopContext) {
        report(.starting(reason: "connecting to the \(configuration.address)"))
        connection.onStateChange { [weak self] state in
            guard let self else { return }
            switch state {
            case .connected:
                // Activates the portal where it is activatable; its owner's arrival reads again.
                self.readAll(then: {})
            case .disconnected(let error):
                self.owner = nil
                self.ownerKnown = false
                self.epoch += 1
                self.report(.unavailable(reason: "\(self.configuration.address) unreachable: \(error)"))
            default:
                break
            }
        }
        connection.subscribe(
            DBusMatchRule(sender: Self.service, path: Self.path, interface: Self.interface, member: "SettingChanged")
        ) { [weak self] signal in self?.settingChanged(signal) }
        connection.watchNameOwner(Self.service) { [weak self] newOwner in self?.ownerChanged(newOwner) }
        connection.connect()
    }

    func stop(in context: LoopContext, then done: @escaping () -> Void) {
        stopped = true
        connection.close()
        done()
    }

    func reread(then done: @escaping () -> Void) {
        guard !stopped, connection.isConnected else {
            done()
            return
        }
        readAll(then: done)
    }

    private func ownerChanged(_ newOwner: String?) {
        guard !stopped, !ownerKnown || newOwner != owner else { return }
        ownerKnown = true
        let hadOwner = owner != nil
        owner = newOwner
        epoch += 1
        if newOwner == nil {
            report(.unavailable(reason: "the portal (\(Self.service)) is not running"))
        } else if hadOwner || connection.isConnected {
            readAll(then: {})
        }
    }

    private func readAll(then done: @escaping () -> Void) {
        let epoch = self.epoch
        connection.call(
            destination: Self.service, path: Self.path, interface: Self.interface, member: "ReadAll",
            arguments: [.strings(configuration.namespaces)]
        ) { [weak self] result in
            defer { done() }
            guard let self, !self.stopped, self.epoch == epoch else { return }
            switch result {
            case .success(let values):
                guard values.count == 1, case .dictionary("s", "a{sv}", let namespaces) = values[0] else {
                    self.problem("ReadAll returned '\(values.map(\.signature).joined())', expected 'a{sa{sv}}'; skipped")
                    return
                }
                self.applyAll(namespaces)
                self.report(.running)
            case .failure(let error):
                if error.name == DBusError.Name.disconnected { return }
                self.problem("ReadAll failed: \(error)")
                self.report(.unavailable(reason: "the portal (\(Self.service)) cannot be read: \(error)"))
            }
        }
    }

    private func applyAll(_ namespaces: [DBusDictionaryEntry]) {
        var seen: Set<String> = []
        for entry in namespaces {
            guard case .string(let namespace) = entry.key,
                  PortalSettingsSource.selects(configuration.namespaces, namespace: namespace),
                  case .dictionary(_, _, let settings) = entry.value
            else { continue }
            for setting in settings {
                guard case .string(let name) = setting.key else { continue }
                let key = PortalSettingsSource.key(namespace: namespace, key: name)
                seen.insert(key)
                bus.publishIfChanged(key, PortalSettingsSource.json(from: setting.value))
            }
        }
        for key in published.subtracting(seen).sorted() { bus.publishIfChanged(key, .null) }
        published = seen
    }

    private func settingChanged(_ signal: DBusSignal) {
        guard !stopped else { return }
        guard signal.arguments.count == 3, case .string(let namespace) = signal.arguments[0],
              case .string(let name) = signal.arguments[1], case .variant(let value) = signal.arguments[2]
        else {
            problem("SettingChanged from \(signal.sender) has arguments '\(signal.signature)', expected 'ssv'; skipped", peer: signal.sender)
            return
        }
        guard PortalSettingsSource.selects(configuration.namespaces, namespace: namespace) else { return }
        let key = PortalSettingsSource.key(namespace: namespace, key: name)
        published.insert(key)
        bus.publishIfChanged(key, PortalSettingsSource.json(from: value))
    }
}
