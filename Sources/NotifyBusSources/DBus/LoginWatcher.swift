import DBus
import EpollLoop
import NotifyBus

#if canImport(Glibc)
import Glibc
#endif

/// The loop-side part of `LoginSource`: logind's manager, and the session once it is resolved.
final class LoginWatcher: DBusSourceWatcher<LoginConfiguration> {
    static let service: BusName = "org.freedesktop.login1"
    override static var peers: [DBusPeer] {
        [DBusPeer(name: service, path: "/org/freedesktop/login1", interface: "org.freedesktop.login1.Manager")]
    }
    static let sessionInterface: InterfaceName = "org.freedesktop.login1.Session"
    static let autoSession: ObjectPath = "/org/freedesktop/login1/session/auto"

    /// logind's owner, `PrepareForSleep` and `GetSessionByPID`.
    private var manager: DBusProxy { proxies[0] }
    /// The session's `LockedHint`, once the session is resolved (or being asked through `auto`).
    private var session: DBusProxy?
    /// Whether `session` is the `auto` object, whose `Id` names the real one.
    private var sessionIsAuto = false
    /// Counts session lookups, so that a stale answer is dropped.
    private var lookup: UInt64 = 0
    /// Whether the current logind's manager was read (`system/sleep` published).
    private var managerRead = false
    /// Whether the session question was answered since the current logind was found: its
    /// `LockedHint` published, or no session found. `running` waits for it, so that
    /// `session/locked` is among a new subscriber's initial values.
    private var sessionSettled = false

    override func watch(in context: LoopContext) {
        manager.onOwnerChange { [weak self] owner in
            guard let self, !self.stopped else { return }
            // A new logind (or none): its sessions are looked up again once it answered.
            self.forgetLogind()
            if owner == nil { self.report(.unavailable(reason: "systemd-logind (\(Self.service)) is not running")) }
        }
        manager.onPropertiesChange { [weak self] event in self?.managerEvent(event) }
        manager.onSignal("PrepareForSleep") { [weak self] signal in self?.prepareForSleep(signal) }
    }

    override func disconnected(_ error: DBusError) {
        forgetLogind()
        super.disconnected(error)
    }

    override func release(in context: LoopContext) {
        dropSession()
    }

    override func reread(then done: @escaping () -> Void) {
        guard canRead, manager.owner != nil else {
            done()
            return
        }
        manager.reloadProperties { [weak self] in
            guard let self, !self.stopped, let session = self.session else { return done() }
            session.reloadProperties { [weak self] in
                // A session that could not be read (asked for before logind had it; the `auto`
                // object still loading) was dropped: look it up again.
                if let self, !self.stopped, self.session == nil { self.lookUpSession() }
                done()
            }
        }
    }

    // MARK: The manager

    private func managerEvent(_ event: DBusProxy.PropertiesEvent) {
        guard !stopped else { return }
        switch event {
        case .loaded:
            // Sleep begins and ends with `PrepareForSleep`; a process that runs is awake.
            bus.publishSourceValue("system/sleep", "awake", problem: problem)
            managerRead = true
            if session == nil { lookUpSession() }
            reportStatus()
        case .loadFailed(let error):
            readFailed(error, peer: Self.service, daemon: "systemd-logind")
        case .changed, .malformedSignal:
            // `PrepareForSleep` says when sleep begins and ends; the properties are read at start.
            break
        }
    }

    private func prepareForSleep(_ signal: DBusSignal) {
        guard !stopped else { return }
        guard signal.arguments.count == 1, case .boolean(let sleeping) = signal.arguments[0] else {
            problem(
                "PrepareForSleep from \(signal.sender) has arguments '\(signal.signature)', expected 'b'; skipped",
                key: "system/sleep", peer: signal.sender.rawValue)
            return
        }
        bus.publishSourceValue("system/sleep", sleeping ? "sleeping" : "awake", problem: problem)
        if !sleeping { configuration.onWake?() }
    }

    // MARK: Status

    /// `running` once the manager is read and the session question answered; until then
    /// `starting`, so that `running` means both keys are published.
    private func reportStatus() {
        guard managerRead, !stopped else { return }
        report(sessionSettled ? .running : .starting(reason: "looking up this process's logind session"))
    }

    /// The session question is answered (its `LockedHint` published, or no session).
    private func settleSession() {
        sessionSettled = true
        reportStatus()
    }

    /// logind went away or changed owner (or the bus did): everything is read again.
    private func forgetLogind() {
        dropSession()
        managerRead = false
        sessionSettled = false
    }

    // MARK: The session

    private func dropSession() {
        lookup &+= 1
        session?.close()
        session = nil
        sessionIsAuto = false
    }

    /// `GetSessionByPID(pid)`; when it fails, the `auto` session's `Id`.
    private func lookUpSession() {
        dropSession()
        let number = lookup
        let pid = configuration.processID ?? getpid()
        manager.call("GetSessionByPID", arguments: [.uint32(UInt32(bitPattern: pid))]) { [weak self] result in
            guard let self, !self.stopped, self.lookup == number else { return }
            switch result {
            case .success(let values):
                if values.count == 1, case .objectPath(let text) = values[0], let path = ObjectPath(rawValue: text) {
                    self.follow(path, isAuto: false)
                } else {
                    self.problem("GetSessionByPID returned '\(values.map(\.signature).joined())', expected 'o'; asking the auto session")
                    self.follow(Self.autoSession, isAuto: true)
                }
            case .failure(let error):
                if error.name == DBusError.Name.disconnected || error.name == DBusError.Name.ownerChanged { return }
                self.follow(Self.autoSession, isAuto: true)
            }
        }
    }

    private func follow(_ path: ObjectPath, isAuto: Bool) {
        session?.close()
        let proxy = DBusProxy(connection: connection, destination: Self.service, path: path, interface: Self.sessionInterface)
        session = proxy
        sessionIsAuto = isAuto
        proxy.onPropertiesChange { [weak self, unowned proxy] event in
            guard let self, !self.stopped, self.session === proxy else { return }
            self.sessionEvent(event)
        }
        // It reads the session's properties as soon as it knows logind's owner (at once here).
    }

    private func sessionEvent(_ event: DBusProxy.PropertiesEvent) {
        switch event {
        case .loaded(let properties):
            if sessionIsAuto, case .string(let id) = properties["Id"],
               let path = ObjectPath(rawValue: LoginSource.sessionPath(id: id)), path != session?.path
            {
                // logind signals the session's changes on its own object, not on `auto`.
                follow(path, isAuto: false)
                return
            }
            if let value = properties["LockedHint"] { applyLocked(value) }
            settleSession()
        case .changed(let change):
            if let value = change.changed["LockedHint"] {
                applyLocked(value)
            } else if change.invalidated.contains("LockedHint") {
                session?.reloadProperties()
            }
        case .loadFailed(let error):
            if error.name == DBusError.Name.ownerChanged { return }
            // No session (a service, a container, a login without pam_systemd): no key, until a
            // re-read finds one.
            problem.note("no logind session found for this process: \(error)", key: "session/locked", peer: Self.service.rawValue)
            dropSession()
            settleSession()
        case .malformedSignal(let error):
            problem("unexpected signal: \(error)", key: "session/locked", peer: Self.service.rawValue)
        }
    }

    private func applyLocked(_ value: DBusValue) {
        guard case .boolean(let locked) = value else {
            problem("LockedHint has type '\(value.signature)' (\(value)), expected 'b'; skipped", key: "session/locked", peer: Self.service.rawValue)
            return
        }
        bus.publishSourceValue("session/locked", .bool(locked), problem: problem)
    }
}
