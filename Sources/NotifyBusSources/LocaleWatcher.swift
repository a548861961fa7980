import DBus
import EpollLoop
import NotifyBus

#if canImport(Glibc)
import Glibc
#endif

/// The loop-side part of `LocaleSource`.
final class LocaleWatcher: ConfiguredWatcher {
    static let service = "org.freedesktop.locale1"
    static let path = "/org/freedesktop/locale1"
    static let interface = "org.freedesktop.locale1"

    private let bus: NotificationBus
    private let configuration: LocaleSource.Configuration
    private unowned let context: LoopContext
    private let report: (SourceStatus) -> Void
    private let problem: SourceProblems
    private let connection: DBusConnection
    private var files: FileChangeWatcher?
    private var owner: String??
    private var stopped = false
    /// Bumped at every read, so only the latest read's answer is applied.
    private var readNumber = 0
    /// Whether a locale was published (from localed or the files).
    private var known = false

    init(
        bus: NotificationBus, configuration: LocaleSource.Configuration, context: LoopContext,
        report: @escaping (SourceStatus) -> Void, problem: SourceProblems
    ) {
        self.bus = bus
        self.configuration = configuration
        self.context = context
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
                self.read(then: {})
            case .disconnected(let error):
                self.owner = nil
                // localed cannot be reached: the files are what is known (before the status).
                if !self.known { self.readFiles() }
                self.report(.unavailable(reason: "\(self.configuration.address) unreachable: \(error)"))
            default:
                break
            }
        }
        connection.subscribePropertiesChanged(sender: Self.service, path: Self.path, interface: Self.interface) {
            [weak self] result in
            switch result {
            case .success(let change): self?.changed(change)
            case .failure(let error): self?.problem("unexpected signal: \(error)")
            }
        }
        connection.watchNameOwner(Self.service) { [weak self] newOwner in
            guard let self else { return }
            let previous = self.owner
            self.owner = .some(newOwner)
            // A new process (restart, activation after an idle exit): read what it says.
            if let newOwner, previous != nil, previous != .some(newOwner) { self.read(then: {}) }
        }
        files = FileChangeWatcher(paths: configuration.files, context: context) { [weak self] in
            self?.filesChanged()
        }
        if let problem = files?.problem { self.problem("cannot watch the locale files: \(problem)") }
        connection.connect()
    }

    func stop(in context: LoopContext, then done: @escaping () -> Void) {
        stopped = true
        files?.stop()
        files = nil
        connection.close()
        done()
    }

    func reread(then done: @escaping () -> Void) {
        guard !stopped else {
            done()
            return
        }
        if connection.isConnected {
            read(then: done)
        } else {
            if !known { readFiles() }
            done()
        }
    }

    private func filesChanged() {
        guard !stopped else { return }
        if connection.isConnected { read(orFiles: true, then: {}) } else { readFiles() }
    }

    /// Asks localed (activating it if need be). When it cannot answer, falls back to the files
    /// if they changed (`orFiles`) or nothing is known yet; otherwise the last value stands:
    /// localed exits when idle, and what it said last is what the files said, unless they were
    /// edited since, which the file watch reports. (Where localed sees other files than this
    /// process, as in a private mount namespace, re-reading ours would publish a wrong locale.)
    private func read(orFiles: Bool = false, then done: @escaping () -> Void) {
        readNumber += 1
        let number = readNumber
        connection.getProperty(destination: Self.service, path: Self.path, interface: Self.interface, name: "Locale") {
            [weak self] result in
            defer { done() }
            guard let self, !self.stopped, number == self.readNumber else { return }
            switch result {
            case .success(let value):
                self.apply(value)
                self.report(.running)
            case .failure(let error):
                if error.name == DBusError.Name.disconnected { return }
                guard orFiles || !self.known else { return }
                self.problem("reading Locale from \(Self.service) failed: \(error); reading the files")
                if self.readFiles() {
                    self.report(.running)
                } else {
                    self.report(.unavailable(reason: "\(Self.service) cannot be reached (\(error)) and no locale file is readable"))
                }
            }
        }
    }

    private func changed(_ change: DBusPropertiesChange) {
        guard !stopped, change.interface == Self.interface else { return }
        if let value = change.changed["Locale"] {
            readNumber += 1  // newer than any read in flight
            apply(value)
        } else if change.invalidated.contains("Locale") {
            read(then: {})
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
        bus.publishIfChanged("locale", .object(object))
    }

    /// Reads the first locale file that exists; returns whether one was read.
    @discardableResult
    private func readFiles() -> Bool {
        for path in configuration.files {
            guard let text = contentsOfFile(path) else { continue }
            publish(LocaleSource.entries(fromFile: text), from: path)
            return true
        }
        return false
    }
}

/// The contents of `path` (up to 1 MiB), or `nil` when it cannot be opened.
func contentsOfFile(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while bytes.count < 1 << 20 {
        let n = read(fd, &chunk, chunk.count)
        if n <= 0 { break }
        bytes += chunk[0..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
}
