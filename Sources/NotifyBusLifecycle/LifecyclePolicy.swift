/// The app-lifecycle policy as a plain state machine (specification: Freezing background apps):
/// events in, actions out, no I/O. `LifecycleDriver` carries the actions out on the loop.
///
/// The unit frozen is a cgroup. A cgroup is frozen when every window mapped to it has been not
/// activated for `delay` without a break, counted from the later of its last activation and the
/// moment the last reason stopped applying, and no reason applies; it is thawed at once when
/// one of its windows is activated, when a reason starts to apply, when its last window
/// closes, when the compositor is lost and when the policy stops. It is `frozen` only once the
/// kernel says so (`cgroup.events`); a freeze not confirmed within `confirmationTime` is undone
/// and not tried again until one of the cgroup's apps is next in the foreground.
///
/// A frozen cgroup is thawed as well when a message needs one of its connections (`.message`) or
/// when someone else thawed it (`.thawedElsewhere`): its apps are then `background` with reason
/// `woken` and frozen again once they spent `wakeGrace` in the background with no further such
/// message. A background task (`beginTask`) keeps its app's cgroup running for at most
/// `taskLimit`, counted from the later of its beginning and the moment the app left the
/// foreground, with `.expiring` 5 s before the end.
///
/// Times are `Duration`s since any fixed origin (the driver's monotonic clock). There is at most
/// one deadline, and one only while a delay, a confirmation, a wake grace or a task is running.
package struct LifecyclePolicy: Sendable {
    /// What the policy is told.
    package enum Event: Sendable, Hashable {
        /// Every open window with the cgroups it maps to (empty: none of its own).
        case windows([Window])
        /// The deadline that `.arm` asked for has come.
        case deadline
        /// What the cgroup's `cgroup.events` says now: `frozen 1` (`true`) or `frozen 0`.
        case frozen(group: String, Bool)
        /// The cgroup was not frozen: its own `cgroup.freeze` already read 1 (someone else froze
        /// it), or the freeze could not be written (`failed`).
        case notFrozen(group: String, failed: Bool)
        /// The cgroups that hold a process never to be frozen.
        case protectedGroups(Set<String>)
        /// The cgroups that hold an MPRIS player that is `Playing`.
        case playingGroups(Set<String>)
        /// `session/locked` changed.
        case locked(Bool)
        /// A method call or a unicast signal, not the daemon's own, is addressed to a connection
        /// whose process is in the cgroup.
        case message(group: String)
        /// The cgroup the policy froze was thawed by someone else: its own `cgroup.freeze` reads 0.
        case thawedElsewhere(group: String)
        /// The cgroup no longer exists.
        case groupRemoved(group: String)
        /// Messages to frozen connections can no longer be seen: every frozen cgroup is thawed.
        case wakeWatchLost
        /// The connection left the bus: its background tasks end.
        case connectionLeft(String)
        /// The connection to the compositor was lost: every window is gone.
        case compositorLost
        /// The policy stops (notifybusd exits): thaw everything it froze.
        case stop
    }

    /// What to do, in order.
    package enum Action: Sendable, Hashable {
        /// Publish `app/<appID>/lifecycle`.
        case publish(appID: String, AppLifecycle)
        /// Freeze the cgroup (list it in the state file first; report `.frozen` when its
        /// `cgroup.events` says so, or `.notFrozen`).
        case freeze(group: String)
        /// Thaw the cgroup (and take it out of the state file).
        case thaw(group: String)
        /// Call back with `.deadline` at this time, replacing any earlier deadline.
        case arm(Duration)
        /// No deadline is needed any more.
        case disarm
        /// Tell the task's connection that its grant runs out in `seconds`
        /// (`BackgroundTaskExpiring`).
        case expiring(task: UInt32, connection: String, seconds: UInt32)
    }

    /// A window as the policy sees it: its app and the cgroups it maps to.
    package struct Window: Sendable, Hashable {
        /// The backend's name for it.
        package var id: UInt64
        /// Its app id.
        package var appID: String
        /// Whether the compositor says it is activated.
        package var activated: Bool
        /// Its app's cgroups (paths in the `0::` form): with a PID, the window process's group;
        /// without one, every app unit of the app id. Empty: no app unit.
        package var groups: [String]

        /// A window.
        package init(id: UInt64, appID: String, activated: Bool, groups: [String]) {
            self.id = id
            self.appID = appID
            self.activated = activated
            self.groups = groups
        }
    }

    /// Where a cgroup is, as far as the policy goes.
    enum Freezing: Sendable, Hashable {
        /// Not frozen by the policy.
        case running
        /// `.freeze` was asked at this time; not confirmed yet.
        case pending(since: Duration)
        /// Frozen by the policy, confirmed.
        case frozen
    }

    /// A window the policy follows.
    struct TrackedWindow: Sendable, Hashable {
        var window: Window
        /// Since when it has been not activated (the lock counting as not activated); `nil`
        /// while it is.
        var inactiveSince: Duration?
    }

    /// Why a cgroup is not tried again until one of its apps is next in the foreground.
    enum Hold: Sendable, Hashable {
        /// Its freeze failed, or was not confirmed in time (reason `failed`).
        case failed
        /// Someone else froze it, or thawed what the policy froze: it is theirs.
        case elsewhere
    }

    /// What the policy knows of a cgroup.
    struct Group: Sendable, Hashable {
        var freezing = Freezing.running
        /// The last time a window joined it or an activated window left it.
        var restartedAt: Duration
        /// The last time a reason stopped applying to it.
        var reasonEndedAt: Duration? = nil
        /// Whether a reason applied to it at the last settle.
        var wasBlocked = false
        /// Not tried again until one of its apps is next in the foreground.
        var hold: Hold? = nil
        /// Since when its wake grace runs (a message or someone else thawed it); `nil`: not woken.
        var wokenAt: Duration? = nil
    }

    /// How long an app stays in the background before it is frozen.
    package let delay: Duration
    /// App ids never frozen.
    package let exempt: Set<String>
    /// How long a freeze may take to be confirmed.
    package let confirmationTime: Duration
    /// How long a woken app stays running in the background before it is frozen again.
    package let wakeGrace: Duration
    /// How long a background task keeps its app running in the background.
    package let taskLimit: Duration
    /// How long before a task's end its connection is told.
    package static let expiryWarning = Duration.seconds(5)
    /// The most open tasks of one app.
    package static let tasksPerApp = 16

    var windows: [UInt64: TrackedWindow] = [:]
    var groups: [String: Group] = [:]
    var protectedGroups: Set<String> = []
    var playingGroups: Set<String> = []
    var isLocked = false
    var isStopped = false
    var tasks: [UInt32: BackgroundTask] = [:]
    var nextTask: UInt32 = 1
    /// What was last published per app id (`closed` ones included: the key stays).
    package internal(set) var published: [String: AppLifecycle] = [:]
    /// The deadline armed now.
    package internal(set) var armed: Duration?

    /// A policy with nothing known yet.
    package init(
        delay: Duration, exempt: Set<String> = [], confirmationTime: Duration = .seconds(5),
        wakeGrace: Duration = .seconds(10), taskLimit: Duration = .seconds(30)
    ) {
        self.delay = delay
        self.exempt = exempt
        self.confirmationTime = confirmationTime
        self.wakeGrace = wakeGrace
        self.taskLimit = taskLimit
    }

    /// The cgroups frozen by the policy or being frozen.
    package var frozenGroups: Set<String> {
        Set(groups.filter { $0.value.freezing != .running }.keys)
    }

    /// The cgroups whose connections' messages matter: those frozen or being frozen, and those
    /// woken within their grace (a further message restarts it). Messages to no other cgroup
    /// need to be seen.
    package var watchedGroups: Set<String> {
        Set(groups.filter { $0.value.freezing != .running || $0.value.wokenAt != nil }.keys)
    }

    /// Takes `event` at time `now`; returns what to do, in order.
    package mutating func handle(_ event: Event, now: Duration) -> [Action] {
        guard !isStopped else { return [] }
        var actions: [Action] = []
        switch event {
        case .windows(let list):
            update(windows: list, now: now)
        case .deadline:
            armed = nil
        case .frozen(let path, let isFrozen):
            guard isFrozen, case .pending = groups[path]?.freezing else { break }
            groups[path]?.freezing = .frozen
        case .message(let path):
            // A frozen cgroup is thawed by the settle; one within its grace starts it again.
            guard let group = groups[path], group.freezing != .running || group.wokenAt != nil else { break }
            groups[path]?.wokenAt = now
        case .thawedElsewhere(let path):
            guard let group = groups[path], group.freezing != .running else { break }
            groups[path]?.freezing = .running
            groups[path]?.wokenAt = now
        case .groupRemoved(let path):
            groups[path]?.freezing = .running
        case .wakeWatchLost:
            for (path, group) in groups where group.freezing != .running { groups[path]?.wokenAt = now }
        case .connectionLeft(let name):
            tasks = tasks.filter { $0.value.connection != name }
        case .notFrozen(let path, let failed):
            guard var group = groups[path], group.freezing != .running else { break }
            group.freezing = .running
            group.hold = failed ? .failed : .elsewhere
            groups[path] = group
            if failed { actions.append(.thaw(group: path)) }
        case .protectedGroups(let set):
            protectedGroups = set
        case .playingGroups(let set):
            playingGroups = set
        case .locked(let locked):
            guard locked != isLocked else { return [] }
            isLocked = locked
            for (id, tracked) in windows where tracked.window.activated {
                windows[id]?.inactiveSince = locked ? now : nil
            }
        case .compositorLost:
            for id in Array(windows.keys) { windows[id] = nil }
        case .stop:
            isStopped = true
            tasks.removeAll()
            let thaws = groups.filter { $0.value.freezing != .running }.keys.sorted().map { Action.thaw(group: $0) }
            groups.removeAll()
            return thaws + (armed == nil ? [] : [.disarm])
        }
        return settle(now: now, before: actions)
    }

    /// Replaces the windows with `list`, restarting the counts of what changed.
    private mutating func update(windows list: [Window], now: Duration) {
        var next: [UInt64: TrackedWindow] = [:]
        for window in list where !window.appID.isEmpty {
            let isActive = window.activated && !isLocked
            if let old = windows[window.id] {
                let wasActive = old.inactiveSince == nil
                var tracked = TrackedWindow(window: window, inactiveSince: old.inactiveSince)
                if isActive {
                    tracked.inactiveSince = nil
                } else if wasActive {
                    tracked.inactiveSince = now
                }
                if old.window.appID != window.appID { tracked.inactiveSince = isActive ? nil : now }
                for path in Set(window.groups).subtracting(old.window.groups) { restart(path, now: now) }
                if wasActive { for path in Set(old.window.groups).subtracting(window.groups) { restart(path, now: now) } }
                next[window.id] = tracked
            } else {
                next[window.id] = TrackedWindow(window: window, inactiveSince: isActive ? nil : now)
                for path in window.groups { restart(path, now: now) }
            }
        }
        for (id, old) in windows where next[id] == nil && old.inactiveSince == nil {
            for path in old.window.groups { restart(path, now: now) }
        }
        windows = next
    }

    private mutating func restart(_ path: String, now: Duration) {
        if groups[path] == nil {
            groups[path] = Group(restartedAt: now)
        } else {
            groups[path]?.restartedAt = now
        }
    }
}
