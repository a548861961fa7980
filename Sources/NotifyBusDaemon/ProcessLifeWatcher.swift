package import EpollLoop
package import Logging
package import SystemSupport

/// Follows whether processes can run: frozen by the cgroup v2 freezer, or stopped by a signal.
/// It lives on an event loop's thread and tells, through each follower's handler, when a
/// followed process stops being able to run and when it can again.
///
/// ```swift
/// // On the loop thread (a job of `EventLoopThread.execute`, or a handler on its loop):
/// let watcher = ProcessLifeWatcher(context: context, logger: logger)
/// let token = watcher.follow(process: identity, group: ControlGroup.group(ofProcess: identity.pid)) { canRun in
///     canRun ? subscription.resume() : subscription.suspend()
/// }
/// …
/// if watcher.check(token) { send(event) }      // before an event goes to the process
/// …
/// watcher.unfollow(token)                       // the connection left
/// ```
///
/// - **Frozen**: the group of the process (the `0::` line of `/proc/PID/cgroup`, read once by the
///   caller, given to `follow`) is found under a cgroup2 mount of `/proc/self/mountinfo`, and its
///   `cgroup.events` is watched with inotify (`IN_MODIFY`), one watch per distinct group shared
///   by its followers; after each change the file's `frozen` field is read again. A frozen
///   ancestor shows there too. The root group is never frozen. It never writes a freezer file.
/// - **Stopped**: nothing tells of a stop, so `check(_:)` reads `/proc/PID/stat` when asked
///   (call it when an event would be sent to the process), and while a followed process is
///   stopped a timer reads it again every `pollInterval` until it runs.
///
/// Idle costs nothing: with no process stopped there is no timer, only the inotify watches.
/// Where there is no cgroup2 mount (or no inotify), only stops are followed, and the watcher logs
/// so once. A process is its PID and start time: one that is gone (exited, or its PID reused)
/// counts as "can run" from then on. A group that is removed and files that cannot be read or
/// say something unexpected change nothing or count as "can run".
///
/// Not `Sendable`: it is made, used and released on the loop thread of its `LoopContext` (keep it
/// in the loop's storage, `LoopContext[local:]`, or in another loop-side object). Its decisions
/// are `ProcessLifeState`'s; this type only carries them out.
package final class ProcessLifeWatcher {
    /// A following, as `follow(process:group:onChange:)` returns it: give it back to `check(_:)`,
    /// `canRun(_:)` and `unfollow(_:)`.
    package struct Token: Sendable, Hashable, CustomStringConvertible {
        let id: UInt64
        /// `life#N`.
        package var description: String { "life#\(id)" }
    }

    private typealias State = ProcessLifeState<Token>

    private unowned let context: LoopContext
    private let logger: Logger
    /// The cgroup2 mounts groups are looked up in, the first that shows a group being used.
    package let mounts: [CgroupMount]
    /// How often a stopped process is read again.
    package let pollInterval: Duration
    private var inotify: InotifyWatches?
    private var state = State()
    private var handlers: [Token: (Bool) -> Void] = [:]
    /// The watched `cgroup.events` of each group (by its path in the hierarchy), and back.
    private var eventsFiles: [String: String] = [:]
    private var groupsOfFiles: [String: String] = [:]
    private var pollTimer: LoopTimer?
    private var nextToken: UInt64 = 1
    private var pending: [State.Action] = []
    private var isPerforming = false
    /// The processes whose `/proc/PID/stat` `check(_:)` read in this round of the loop: one read
    /// serves every event the round sends them (a process with many connections or subscriptions
    /// gets one change's events all in the same round). Emptied when the round ends.
    private var checkedThisRound: Set<ProcessIdentity> = []

    /// A watcher on `context`'s loop; no process is followed yet.
    /// - Parameters:
    ///   - context: the loop it lives on; create and use the watcher only on that loop's thread.
    ///   - logger: where it says, once, that it cannot follow freezes, and what it could not watch.
    ///   - mounts: the cgroup2 mounts to find groups in (by default those of
    ///     `CgroupMount.usableMounts(mountInfoPath:)`); empty: only stops are followed.
    ///   - pollInterval: how often a stopped process is read again (at most a second, as
    ///     notifybusd promises; shorter in tests).
    package init(
        context: LoopContext, logger: Logger = Logger(label: "notifybus.daemon.life"),
        mounts: [CgroupMount] = CgroupMount.usableMounts(), pollInterval: Duration = .seconds(1)
    ) {
        self.context = context
        self.logger = logger
        self.mounts = mounts
        self.pollInterval = pollInterval
        guard !mounts.isEmpty else {
            logger.notice("no usable cgroup2 mount in /proc/self/mountinfo: following stopped processes only, not frozen ones")
            return
        }
        do {
            inotify = try InotifyWatches(context: context) { [weak self] event in self?.groupFileEvent(event) }
        } catch {
            logger.warning("cannot watch cgroup.events (\(error)): following stopped processes only, not frozen ones")
        }
    }

    deinit {
        if let pollTimer { context.cancelTimer(pollTimer) }
        inotify?.stop()
    }

    /// Whether freezes are followed: there is a cgroup2 mount, and inotify works.
    package var followsFreezer: Bool { inotify != nil }

    /// Whether the poll timer is armed (exactly while a followed process is stopped).
    package var isPolling: Bool { pollTimer.map { context.isScheduled($0) } ?? false }

    // MARK: Following

    /// Starts following `process`, whose cgroup v2 group is `group` (the `0::` path of its
    /// `/proc/PID/cgroup`; `nil` when unknown); `onChange` is called on the loop thread each time
    /// whether it can run changes (`false`: frozen or stopped; `true`: it runs again, or is gone),
    /// never twice in a row with the same value. The process counts as running at first.
    ///
    /// The group's `cgroup.events` is read at once when the group is new to the watcher: when
    /// that says frozen, `onChange(false)` is called before this returns. Each call is a
    /// following of its own, even for the same process.
    /// - Returns: the token that names this following.
    package func follow(
        process: ProcessIdentity, group: String?, onChange: @escaping (_ canRun: Bool) -> Void
    ) -> Token {
        let token = Token(id: nextToken)
        nextToken += 1
        handlers[token] = onChange
        perform(state.follow(token, process: process, group: watchable(group, of: process)))
        return token
    }

    /// How many followings there are, for tests of what a client leaves behind.
    package var followingCount: Int { state.followers.count }

    /// Stops following: `token`'s handler is not called again. Unknown tokens are ignored.
    package func unfollow(_ token: Token) {
        handlers[token] = nil
        perform(state.unfollow(token))
    }

    /// Whether the followed process can run, as its handler was last told (`true` at first, and
    /// for a token not followed).
    package func canRun(_ token: Token) -> Bool { state.canRun(token) }

    /// Reads now whether the followed process is stopped, and returns whether it can run. Call it
    /// when an event would be sent to the process: a stop is noticed then at the latest. When it
    /// has just stopped, its handlers are called (`false`) before this returns, and the poll
    /// starts; a frozen process is reported not running as its group last said. The process is
    /// read once per round of the loop: later checks in the same round answer from that read.
    /// - Returns: `canRun(token)` after the read.
    @discardableResult
    package func check(_ token: Token) -> Bool {
        guard let process = state.followers[token]?.process else { return true }
        guard checkedThisRound.insert(process).inserted else { return state.canRun(token) }
        if checkedThisRound.count == 1 {
            context.runSoon { [weak self] in self?.checkedThisRound = [] }
        }
        for case .readProcess(let process) in state.checkRequested(process: process) {
            perform(state.processStatRead(process: process, ProcessRunState.read(process)))
        }
        return state.canRun(token)
    }

    /// Reads every followed cgroup's `cgroup.events` now, without waiting for inotify: a freeze
    /// the daemon itself just saw confirmed is followed before anything is said of it.
    package func rereadGroups() {
        perform(state.allGroupsChanged())
    }

    /// Reads again the cgroup of every followed process (`/proc/PID/cgroup`) and follows the
    /// groups they are in now: after a process was moved into another cgroup (a new app scope).
    package func rereadProcessGroups() {
        for (token, follower) in state.followers.sorted(by: { $0.value.order < $1.value.order }) {
            let group = watchable(ControlGroup.group(ofProcess: follower.process.pid), of: follower.process)
            perform(state.moved(token, to: group))
        }
    }

    /// Stops following everything: no handler is called again, the watches and the timer end.
    package func stop() {
        handlers = [:]
        state = State()
        pending = []
        checkedThisRound = []
        if let pollTimer { context.cancelTimer(pollTimer) }
        pollTimer = nil
        inotify?.stop()
        inotify = nil
        eventsFiles = [:]
        groupsOfFiles = [:]
    }

    /// The `cgroup.events` files watched now, for tests.
    var watchedFiles: [String] { Array(eventsFiles.values).sorted() }

    // MARK: Carrying out actions

    /// `group` when freezes are followed and the group is under a mount; `nil` otherwise.
    private func watchable(_ group: String?, of process: ProcessIdentity) -> String? {
        guard inotify != nil else { return nil }
        guard let group else {
            logger.debug("no cgroup v2 group for process \(process.pid): following only its stops")
            return nil
        }
        guard CgroupMount.directory(ofGroup: group, in: mounts) != nil else {
            logger.debug("group \(group) of process \(process.pid) is under no cgroup2 mount: following only its stops")
            return nil
        }
        return group
    }

    /// Carries out `actions` in order, and those they lead to after them. Called again while it
    /// runs (from a handler), it queues them after the others.
    private func perform(_ actions: [State.Action]) {
        pending += actions
        guard !isPerforming else { return }
        isPerforming = true
        defer { isPerforming = false }
        var index = 0
        while index < pending.count {
            let action = pending[index]
            index += 1
            carryOut(action)
        }
        pending = []
    }

    private func carryOut(_ action: State.Action) {
        switch action {
        case .watchGroup(let group):
            guard let inotify, let directory = CgroupMount.directory(ofGroup: group, in: mounts) else { return }
            let file = directory == "/" ? "/cgroup.events" : directory + "/cgroup.events"
            if let error = inotify.add(file) {
                logger.debug("cannot watch \(file): errno \(error)")
                return
            }
            eventsFiles[group] = file
            groupsOfFiles[file] = group
        case .unwatchGroup(let group):
            guard let file = eventsFiles.removeValue(forKey: group) else { return }
            groupsOfFiles[file] = nil
            inotify?.remove(file)
        case .readGroup(let group):
            perform(state.groupEventsRead(group, frozen: readFrozen(group)))
        case .readProcess(let process):
            perform(state.processStatRead(process: process, ProcessRunState.read(process)))
        case .startPolling:
            if let pollTimer { context.cancelTimer(pollTimer) }
            pollTimer = context.scheduleTimer(after: pollInterval, repeating: pollInterval) { [weak self] in
                guard let self else { return }
                self.perform(self.state.pollTick())
            }
        case .stopPolling:
            if let pollTimer { context.cancelTimer(pollTimer) }
            pollTimer = nil
        case .notify(let token, let canRun):
            handlers[token]?(canRun)
        }
    }

    /// The `frozen` field of `group`'s `cgroup.events`; `nil` when it cannot be read or has none.
    private func readFrozen(_ group: String) -> Bool? {
        guard let directory = CgroupMount.directory(ofGroup: group, in: mounts) else { return nil }
        let file = directory == "/" ? "/cgroup.events" : directory + "/cgroup.events"
        guard case .success(let bytes) = SmallFile.contents(of: file, limit: 4096) else { return nil }
        return ControlGroup.frozen(inEventsFile: String(decoding: bytes, as: UTF8.self))
    }

    /// What inotify told of the watched files.
    private func groupFileEvent(_ event: InotifyWatches.Event) {
        switch event {
        case .changed(let file):
            guard let group = groupsOfFiles[file] else { return }
            perform(state.groupChanged(group))
        case .ended(let file):
            // The group was removed: it can no longer be frozen; the read says so.
            guard let group = groupsOfFiles.removeValue(forKey: file) else { return }
            eventsFiles[group] = nil
            perform(state.groupChanged(group))
        case .overflow:
            perform(state.allGroupsChanged())
        }
    }
}
