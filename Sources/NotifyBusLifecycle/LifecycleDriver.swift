#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DBus
import EpollLoop
import Logging
import NotifyBus
import SourceFramework
import SystemSupport

/// The lifecycle on the loop thread: the window backend, the policy and its one timer, the
/// freeze mechanism and the files it writes, the session's services, and the
/// `app/<app-id>/lifecycle` keys on the bus. `LifecycleSource` is its handle.
final class LifecycleDriver {
    /// The first delay before connecting to the compositor again.
    static let firstRetry = Duration.seconds(1)
    /// The longest.
    static let longestRetry = Duration.seconds(60)

    let configuration: LifecycleConfiguration
    let bus: NotificationBus
    unowned let context: LoopContext
    let logger: Logger
    let report: (SourceStatus) -> Void
    /// Called before a `frozen` value is published, so that the daemon's freezer follower has
    /// suspended the app's subscriptions first.
    private let beforeFrozen: () -> Void
    /// Brings a change of `session/locked` to the loop thread, to `handle(.locked(_:))`.
    private let postLocked: @Sendable (Bool) -> Void
    private let origin = ContinuousClock.now
    var policy: LifecyclePolicy
    var mechanism: FreezeMechanism
    var freezer: CgroupFreezer?
    private(set) var backend: (any ToplevelBackend)?
    var mounts: [CgroupMount] = []
    var root = ""
    private var timer: LoopTimer?
    private var retry: LoopTimer?
    private var failures = 0
    private var lock: Subscription?
    private var hasList = false
    private(set) var stopped = false
    /// PIDs never to be frozen, by who reported them.
    private var protectedPIDs: [String: Set<Int32>] = [:]
    /// The session bus: the systemd user manager, media players, protected names, the bus's
    /// connections and the wake watch.
    let connection: DBusConnection?
    var session: SessionServices?
    /// The processes of MPRIS players that are `Playing`.
    private var playingPIDs: Set<Int32> = []
    /// The cgroups the policy was last told hold protected and playing processes.
    private(set) var protectedGroups: Set<String> = []
    private var playingGroups: Set<String> = []
    /// The timers of thaws waiting for `ThawUnit`.
    var thawPatience: [String: LoopTimer] = [:]
    /// The compositor's last list of windows, and the policy's windows made of it.
    var windows: [ToplevelWindow] = []
    var policyWindows: [LifecyclePolicy.Window] = []
    /// The apps a scope was made for (or whose process was found in an app unit already), once each.
    var appsPlaced: Set<String> = []
    /// The checks of processes being moved into a made scope, by PID.
    var moves: [Int32: LoopTimer] = [:]
    /// Called after a process was moved into a made scope: the daemon's freezer follower reads
    /// its processes' cgroups again.
    let afterMove: () -> Void

    init(
        configuration: LifecycleConfiguration, bus: NotificationBus, context: LoopContext, logger: Logger,
        report: @escaping (SourceStatus) -> Void, beforeFrozen: @escaping () -> Void, afterMove: @escaping () -> Void,
        postLocked: @escaping @Sendable (Bool) -> Void, connection: DBusConnection?
    ) {
        self.afterMove = afterMove
        self.postLocked = postLocked
        self.connection = connection
        self.configuration = configuration
        self.bus = bus
        self.context = context
        self.logger = logger
        self.report = report
        self.beforeFrozen = beforeFrozen
        policy = LifecyclePolicy(
            delay: configuration.delayDuration, exempt: configuration.exempt,
            wakeGrace: .seconds(configuration.wakeGrace), taskLimit: .seconds(configuration.taskLimit))
        mechanism = FreezeMechanism(hasUnitManager: connection != nil)
    }

    var now: Duration { ContinuousClock.now - origin }

    /// Checks what the policy needs (a cgroup root, a cgroup2 mount, the state file, a session
    /// bus that lets it monitor), then connects to the compositor; reports `unavailable` with the
    /// reason when something is missing.
    func start() {
        guard let root = configuration.resolvedCgroupRoot() else {
            report(.unavailable(reason: "the cgroup root is missing: the daemon's cgroup has no user@\(getuid()).service ancestor and no cgroup-root is configured"))
            return
        }
        self.root = root
        mounts = CgroupMount.usableMounts()
        guard !mounts.isEmpty else {
            report(.unavailable(reason: "no writable cgroup v2"))
            return
        }
        guard let directory = CgroupMount.directory(ofGroup: root, in: mounts), SmallFile.isReadable(directory + "/cgroup.procs") else {
            report(.unavailable(reason: "the cgroup root \(root) is missing"))
            return
        }
        guard let path = configuration.stateFile ?? FrozenStateFile.defaultPath else {
            report(.unavailable(reason: "cannot write the state file: XDG_RUNTIME_DIR is not set"))
            return
        }
        let freezer: CgroupFreezer
        do {
            freezer = try CgroupFreezer(context: context, mounts: mounts, stateFile: FrozenStateFile(path: path), logger: logger)
        } catch {
            report(.unavailable(reason: "no writable cgroup v2: \(error)"))
            return
        }
        if let problem = freezer.problem() {
            report(.unavailable(reason: problem))
            return
        }
        guard let connection else {
            report(.unavailable(reason: "no session bus: messages to frozen apps could not wake them"))
            return
        }
        freezer.onChange = { [weak self] change in
            switch change {
            case .changed(let group, let frozen, let ownBitSet): self?.freezeStep(.events(group: group, frozen: frozen, ownBitSet: ownBitSet))
            case .removed(let group): self?.freezeStep(.removed(group: group))
            }
        }
        self.freezer = freezer
        protect([getpid()], as: "notifybusd")
        let session = SessionServices(driver: self, connection: connection)
        self.session = session
        followLock()
        // Nothing is frozen unless a message to a frozen app can be seen.
        session.wake.probe { [weak self] error in
            guard let self, !self.stopped else { return }
            if let error {
                self.report(.unavailable(reason: "the session bus refuses to let notifybusd monitor messages to frozen apps: \(error)"))
                return
            }
            self.connect()
        }
    }

    /// Thaws everything it froze and lets go of everything; nothing happens after it.
    func stop() {
        guard !stopped else { return }
        perform(policy.handle(.stop, now: now))
        carryOut(mechanism.handle(.stop))
        stopped = true
        freezer?.stop()
        session?.stop()
        backend?.stop()
        backend = nil
        lock?.cancel()
        lock = nil
        if let retry { context.cancelTimer(retry) }
        if let timer { context.cancelTimer(timer) }
        for timer in Array(thawPatience.values) + Array(moves.values) { context.cancelTimer(timer) }
        thawPatience = [:]
        moves = [:]
    }

    /// Reports the PIDs that `who` says must never be frozen (the session's services).
    func protect(_ pids: Set<Int32>, as who: String) {
        protectedPIDs[who] = pids
        readGroups()
    }

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

    // MARK: The compositor

    private func connect() {
        guard !stopped else { return }
        do {
            backend = try makeBackend { [weak self] update in self?.backendUpdate(update) }
        } catch {
            report(.unavailable(reason: "\(error)"))
            scheduleRetry()
            return
        }
        protect(backend?.compositorPID.map { [$0] } ?? [], as: "compositor")
    }

    private func backendUpdate(_ update: ToplevelUpdate) {
        guard !stopped else { return }
        switch update {
        case .windows(let list):
            // A change of activation alone is told before anything is read from /proc, so that
            // the thaw it may bring waits for no read. Processes move between cgroups: where the
            // protected and playing ones are is read again with every list (a few /proc reads).
            if hasList { tellActivation(list) }
            readGroups()
            windowsChanged(list)
            if !hasList {
                hasList = true
                failures = 0
                report(.running)
            }
        case .lost(let reason):
            // Lost before the first list: the compositor refused or did not answer (the protocol
            // not offered, say), which the reason says as it is.
            let hadList = hasList
            backend?.stop()
            backend = nil
            hasList = false
            handle(.compositorLost)
            report(.unavailable(reason: hadList ? "the compositor connection was lost: \(reason)" : reason))
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

    /// Carries out the policy's actions, then tells the wake watch what to watch now (after
    /// them: a thaw waits for no read of the bus's connections, and a freeze waits for the watch
    /// to cover its cgroup anyway).
    func perform(_ actions: [LifecyclePolicy.Action]) {
        defer { session?.wake.watch(policy.watchedGroups) }
        for action in actions {
            switch action {
            case .publish(let appID, let lifecycle):
                if lifecycle.state == .frozen { beforeFrozen() }
                bus.publish(AppLifecycle.key(of: appID), lifecycle.value)
            case .freeze(let group):
                freezeStep(.freeze(group: group, ownBitSet: freezer?.ownBitSet(group) ?? false))
            case .thaw(let group):
                freezeStep(.thaw(group: group))
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
            case .expiring(let task, let connection, let seconds):
                session?.expiring(task: task, connection: connection, seconds: seconds)
            }
        }
    }
}
