import DBus
import EpollLoop
import NotifyBus
import SystemSupport

/// The loop-side part of `LocaleSource`.
final class LocaleWatcher: DBusSourceWatcher<LocaleConfiguration> {
    static let service: BusName = "org.freedesktop.locale1"
    override static var peers: [DBusPeer] {
        [DBusPeer(name: service, path: "/org/freedesktop/locale1", interface: "org.freedesktop.locale1", followsDepartures: false)]
    }

    /// localed's owner and `Locale` (read with `GetAll`, kept by `PropertiesChanged`).
    private var localed: DBusProxy { proxies[0] }
    /// Whether the files changed since the last answer of localed: a failing read then falls
    /// back to them.
    private var filesChangedSinceRead = false
    /// Whether a locale was published (from localed or the files).
    private var known = false

    override func watch(in context: LoopContext) {
        localed.onPropertiesChange { [weak self] event in self?.propertiesEvent(event) }
        watchFiles(configuration.files, naming: "the locale files", in: context) { [weak self] in self?.filesChanged() }
    }

    /// Activates localed when it is not running; its arrival reads again.
    override func connected() {
        localed.reloadProperties()
    }

    /// localed cannot be reached: the files are what is known (read before the status).
    override func disconnected(_ error: DBusError) {
        if !known { readFiles() }
        super.disconnected(error)
    }

    override func reread(then done: @escaping () -> Void) {
        guard !stopped else {
            done()
            return
        }
        if connection.isConnected {
            localed.reloadProperties(then: done)
        } else {
            if !known { readFiles() }
            done()
        }
    }

    private func filesChanged() {
        guard !stopped else { return }
        if connection.isConnected {
            filesChangedSinceRead = true
            localed.reloadProperties()
        } else {
            readFiles()
        }
    }

    /// What localed says. When it cannot answer, falls back to the files if they changed since
    /// its last answer or nothing is known yet; otherwise the last value stands: localed exits
    /// when idle, and what it said last is what the files said, unless they were edited since,
    /// which the file watch reports. (Where localed sees other files than this process, as in a
    /// private mount namespace, re-reading ours would publish a wrong locale.) A new owner
    /// (restart, activation after an idle exit) is read by the proxy.
    private func propertiesEvent(_ event: DBusProxy.PropertiesEvent) {
        guard !stopped else { return }
        switch event {
        case .loaded(let properties):
            let orFiles = filesChangedSinceRead
            filesChangedSinceRead = false
            guard let value = properties["Locale"] else {
                readFailed(.init(name: DBusError.Name.unknownProperty, message: "GetAll returned no Locale"), orFiles: orFiles)
                return
            }
            apply(value)
            report(.running)
        case .loadFailed(let error):
            let orFiles = filesChangedSinceRead
            filesChangedSinceRead = false
            readFailed(error, orFiles: orFiles)
        case .changed(let change):
            if let value = change.changed["Locale"] {
                apply(value)
            } else if change.invalidated.contains("Locale") {
                localed.reloadProperties()
            }
        case .malformedSignal(let error):
            problem("unexpected signal: \(error)")
        }
    }

    private func readFailed(_ error: DBusError, orFiles: Bool) {
        guard orFiles || !known else { return }
        // Where localed is not installed, the files are the normal way.
        problem.note("reading Locale from \(Self.service) failed: \(error); reading the files")
        if readFiles() {
            report(.running)
        } else {
            report(.unavailable(reason: "\(Self.service) cannot be reached (\(error)) and no locale file is readable"))
        }
    }

    private func apply(_ value: DBusValue) {
        guard case .array("s", _) = value, let entries = value.stringArray else {
            problem("Locale has type '\(value.signature)' (\(value)), expected 'as'; skipped")
            return
        }
        publish(entries, from: "\(Self.service) Locale")
    }

    private func publish(_ entries: [String], from origin: String) {
        let (object, invalid) = LocaleSource.object(from: entries)
        for entry in invalid { problem("\(origin): '\(entry)' is not NAME=value; skipped") }
        known = true
        bus.publishSourceValue("locale", .object(object), problem: problem)
    }

    /// Reads the first locale file that exists; returns whether one was read.
    @discardableResult
    private func readFiles() -> Bool {
        for path in configuration.files {
            guard let text = SmallFile.text(of: path) else { continue }
            publish(LocaleSource.entries(fromFile: text), from: path)
            return true
        }
        return false
    }
}
