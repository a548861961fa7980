#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DBus
import EpollLoop
import Logging
import NotifyBus
import NotifyBusSources
import SystemSupport

/// The lifecycle on the loop thread: the window backend, the policy, the freezer and the one
/// timer, and the `app/<app-id>/lifecycle` keys on the bus. `LifecycleService` is its handle.
final class LifecycleDriver {
    /// The name of the `lifecycle` source.
    static let sourceName = "lifecycle"
    /// The first delay before connecting to the compositor again.
    static let firstRetry = Duration.seconds(1)
    /// The longest.
    static let longestRetry = Duration.seconds(60)

    let configuration: LifecycleConfiguration
    let bus: NotificationBus
    unowned let context: LoopContext
    let logger: Logger
    private let onStatus: (SourceStatus) -> Void
    /// Called before a `frozen` value is published, so that the daemon's freezer follower has
    /// suspended the app's subscriptions first.
    private let beforeFrozen: () -> Void
    /// Brings a change of `session/locked` to the loop thread, to `handle(.locked(_:))`.
    private let postLocked: @Sendable (Bool) -> Void
    private let origin = ContinuousClock.now
    private(set) var policy: LifecyclePolicy
    private var freezer: CgroupFreezer?
    private var backend: (any ToplevelBackend)?
    private var mounts: [CgroupMount] = []
    private var root = ""
    private var timer: LoopTimer?
    private var retry: LoopTimer?
    private var failures = 0
    private var lock: Subscription?
    private var hasList = false
    private var stopped = false
    /// PIDs never to be frozen, by who reported them.
    private var protectedPIDs: [String: Set<Int32>] = [:]
    /// The session bus, for the systemd user manager, media players and protected names;
    /// `nil`: none of them is followed.
    private let connection: DBusConnection?
    private var players: MediaPlayers?
    private var protectedNames: ProtectedProcesses?
    private var units: SystemdUnits?
    /// The processes of MPRIS players that are `Playing`.
    private var playingPIDs: Set<Int32> = []
    /// The cgroups the policy was last told hold protected and playing processes.
    private var protectedGroups: Set<String> = []
    private var playingGroups: Set<String> = []
    /// The cgroups frozen through the systemd user manager (`FreezeUnit`): thawed through it too.
    private var unitFrozen: Set<String> = []
    /// How long a thaw waits for `ThawUnit` before writing `cgroup.freeze` itself.
    static let thawUnitPatience = Duration.milliseconds(50)

    init(
        configuration: LifecycleConfiguration, bus: NotificationBus, context: LoopContext, logger: Logger,
        onStatus: @escaping (SourceStatus) -> Void, beforeFrozen: @escaping () -> Void,
        postLocked: @escaping @Sendable (Bool) -> Void, connection: DBusConnection?
    ) {
        self.postLocked = postLocked
        self.connection = connection
        self.configuration = configuration
        self.bus = bus
        self.context = context
        self.logger = logger
        self.onStatus = onStatus
        self.beforeFrozen = beforeFrozen
        policy = LifecyclePolicy(delay: configuration.delayDuration, exempt: configuration.exempt)
    }

    var now: Duration { ContinuousClock.now - origin }

    /// Checks what the policy needs (a cgroup root, a cgroup2 mount, the state file), then
    /// connects to the compositor; reports `unavailable` with the reason when something is missing.
    func start() {
        guard let root = configuration.resolvedCgroupRoot() else {
            onStatus(.unavailable(reason: "the cgroup root is missing: the daemon's cgroup has no user@\(getuid()).service ancestor and no cgroup-root is configured"))
            return
        }
        self.root = root
        mounts = CgroupMount.usableMounts()
        guard !mounts.isEmpty else {
            onStatus(.unavailable(reason: "no writable cgroup v2"))
            return
        }
        guard let directory = CgroupMount.directory(ofGroup: root, in: mounts), SmallFile.isReadable(directory + "/cgroup.procs") else {
            onStatus(.unavailable(reason: "the cgroup root \(root) is missing"))
            return
        }
        guard let path = configuration.stateFile ?? FrozenStateFile.defaultPath else {
            onStatus(.unavailable(reason: "cannot write the state file: XDG_RUNTIME_DIR is not set"))
            return
        }
        let freezer: CgroupFreezer
        do {
            freezer = try CgroupFreezer(context: context, mounts: mounts, stateFile: FrozenStateFile(path: path), logger: logger)
        } catch {
            onStatus(.unavailable(reason: "no writable cgroup v2: \(error)"))
            return
        }
        if let problem = freezer.problem() {
            onStatus(.unavailable(reason: problem))
            return
        }
        freezer.onFrozen = { [weak self] group, frozen in self?.handle(.frozen(group: group, frozen)) }
        freezer.onNotFrozen = { [weak self] group, failed in self?.handle(.notFrozen(group: group, failed: failed)) }
        self.freezer = freezer
        protect(getpid(), as: "notifybusd")
        if let connection { followSession(connection, freezer: freezer) }
        followLock()
        connect()
    }

    /// Thaws everything it froze and lets go of everything; nothing happens after it.
    func stop() {
        guard !stopped else { return }
        perform(policy.handle(.stop, now: now))
        stopped = true
        freezer?.thawAllNow()
        freezer?.stop()
        players?.stop()
        protectedNames?.stop()
        units?.stop()
        backend?.stop()
        backend = nil
        lock?.cancel()
        lock = nil
        if let retry { context.cancelTimer(retry) }
        if let timer { context.cancelTimer(timer) }
    }

    /// Reports the PIDs that `who` says must never be frozen (the session's services).
    func protect(_ pids: Set<Int32>, as who: String) {
        protectedPIDs[who] = pids
        readGroups()
    }

    private func protect(_ pid: Int32, as who: String) { protect([pid], as: who) }

    /// Reports the PIDs whose MPRIS players are `Playing`.
    func setPlaying(_ pids: Set<Int32>) {
        playingPIDs = pids
        readGroups()
    }

    /// Reads where the protected and the playing processes are now, and tells the policy of
    /// what changed (nothing when nothing did: this runs with every window list).
    private func readGroups() {
        let groups = { (pids: Set<Int32>) in Set(pids.compactMap { ControlGroup.group(ofProcess: $0) }) }
        let protected = groups(Set(protectedPIDs.values.joined()))
        if protected != protectedGroups {
            protectedGroups = protected
            handle(.protectedGroups(protected))
        }
        let playing = groups(playingPIDs)
        if playing != playingGroups {
            playingGroups = playing
            handle(.playingGroups(playing))
        }
    }

    /// Follows the session bus: the protected names' owners and the bus daemon, the MPRIS
    /// players, and the systemd user manager, through which units it knows are frozen.
    private func followSession(_ connection: DBusConnection, freezer: CgroupFreezer) {
        protectedNames = ProtectedProcesses(connection: connection, logger: logger) { [weak self] pids in
            self?.protect(pids, as: "session")
        }
        players = MediaPlayers(connection: connection, logger: logger) { [weak self] pids in self?.setPlaying(pids) }
        let units = SystemdUnits(connection: connection, logger: logger)
        self.units = units
        freezer.writer = { [weak self] group, directory, freeze, done in
            guard let self, let units = self.units else { return done(CgroupFreezer.write(freeze, in: directory)) }
            let unit = String(group.split(separator: "/").last ?? "")
            if freeze {
                units.lookUp(unit: unit) { [weak self] lookup in
                    guard case .known = lookup else { return done(CgroupFreezer.write(true, in: directory)) }
                    units.freeze(unit: unit) { [weak self] result in
                        switch result {
                        case .success:
                            self?.unitFrozen.insert(group)
                            done(nil)
                        case .failure(let error):
                            done("FreezeUnit(\(unit)): \(error)")
                        }
                    }
                }
            } else {
                guard self.unitFrozen.remove(group) != nil else { return done(CgroupFreezer.write(false, in: directory)) }
                // ThawUnit, so that systemd's freezer state stays true; its own file written if
                // systemd fails or has not answered within the thaw's bound.
                var answered = false
                let fallback = self.context.scheduleTimer(after: Self.thawUnitPatience) {
                    guard !answered else { return }
                    answered = true
                    done(CgroupFreezer.write(false, in: directory))
                }
                units.thaw(unit: unit) { [weak self] result in
                    guard !answered else { return }
                    answered = true
                    self?.context.cancelTimer(fallback)
                    if case .failure = result { return done(CgroupFreezer.write(false, in: directory)) }
                    done(nil)
                }
            }
        }
        freezer.onThawedNow = { [weak self] group in
            // A thaw written behind systemd's back: systemd is told too, so its state follows.
            guard let self, self.unitFrozen.remove(group) != nil else { return }
            self.units?.thaw(unit: String(group.split(separator: "/").last ?? "")) { _ in }
        }
    }

    // MARK: The compositor

    private func connect() {
        guard !stopped else { return }
        do {
            backend = try makeBackend { [weak self] update in self?.backendUpdate(update) }
        } catch {
            onStatus(.unavailable(reason: "\(error)"))
            scheduleRetry()
            return
        }
        protect(backend?.compositorPID.map { [$0] } ?? [], as: "compositor")
    }

    private func backendUpdate(_ update: ToplevelUpdate) {
        guard !stopped else { return }
        switch update {
        case .windows(let list):
            // Processes move between cgroups: where the protected and playing ones are is read
            // again with every list (a few /proc reads).
            readGroups()
            handle(.windows(list.compactMap(policyWindow)))
            if !hasList {
                hasList = true
                failures = 0
                onStatus(.running)
            }
        case .lost(let reason):
            // Lost before the first list: the compositor refused or did not answer (the protocol
            // not offered, say), which the reason says as it is.
            let hadList = hasList
            backend?.stop()
            backend = nil
            hasList = false
            handle(.compositorLost)
            onStatus(.unavailable(reason: hadList ? "the compositor connection was lost: \(reason)" : reason))
            scheduleRetry()
        }
    }

    private func scheduleRetry() {
        failures += 1
        let seconds = min(Int64(1) << Int64(min(failures - 1, 6)), 60)
        retry = context.scheduleTimer(after: .seconds(seconds)) { [weak self] in
            self?.retry = nil
            self?.connect()
        }
    }

    /// The window as the policy sees it: its app's cgroups, by its process (sway, kde) or by the
    /// app units named after its app id (wlr). A window without an app id is not tracked.
    private func policyWindow(_ window: ToplevelWindow) -> LifecyclePolicy.Window? {
        guard let appID = window.appID, !appID.isEmpty else { return nil }
        let groups: [String]
        if let pid = window.pid {
            groups = AppUnit.group(ofProcess: pid, under: root).map { [$0] } ?? []
        } else {
            groups = AppUnit.groups(of: appID, under: root, mounts: mounts)
        }
        return LifecyclePolicy.Window(id: window.id, appID: appID, activated: window.activated, groups: groups)
    }

    // MARK: The lock

    private func followLock() {
        let post = postLocked
        lock = bus.subscribe(["session/locked"], initial: .current) { event in
            guard let notification = event.notification, case .bool(let locked) = notification.value else { return }
            post(locked)
        }
    }

    // MARK: The policy

    func handle(_ event: LifecyclePolicy.Event) {
        guard !stopped else { return }
        perform(policy.handle(event, now: now))
    }

    private func perform(_ actions: [LifecyclePolicy.Action]) {
        for action in actions {
            switch action {
            case .publish(let appID, let lifecycle):
                if lifecycle.state == .frozen { beforeFrozen() }
                bus.publish(AppLifecycle.key(of: appID), lifecycle.value)
            case .freeze(let group):
                freezer?.freeze(group)
            case .thaw(let group):
                freezer?.thaw(group)
            case .arm(let deadline):
                if let timer { context.cancelTimer(timer) }
                let delay = max(deadline - now, .zero)
                timer = context.scheduleTimer(after: delay) { [weak self] in
                    self?.timer = nil
                    self?.handle(.deadline)
                }
            case .disarm:
                if let timer { context.cancelTimer(timer) }
                timer = nil
            }
        }
    }
}
