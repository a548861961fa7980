/// Whether followed processes can run, as a plain state: which processes are followed (each by
/// a token), the cgroup v2 group of each and whether that group is frozen, and whether each
/// process is stopped by a signal. Every event returns the actions to carry out, in order;
/// `ProcessLifeWatcher` carries them out (inotify watches, file reads, a poll timer, the
/// handlers) and feeds what it reads back as events. No file, no timer and no thread of its own:
/// tests drive it directly.
///
/// The rules it keeps:
/// - A follower can run unless its group is frozen or its process is stopped. It starts as able
///   to run; `notify` is asked for only when that changes.
/// - One watch per distinct group, shared by every follower in it, from the first follower's
///   arrival to the last one's departure; a new watch is followed by a read of the group.
///   The root group (`/`) is never frozen, so never watched; neither is a follower without a group.
/// - `cgroup.events` is a state to re-read, not a list of edges: a read that says what is known
///   already changes nothing. A frozen ancestor shows in the group's own `frozen` field, so only
///   the group itself is watched.
/// - Nothing tells of a stop: a process is read when asked (`checkRequested(process:)`), and
///   while any followed process is stopped, every stopped one is read again at each poll tick.
///   The poll runs only then (`startPolling` and `stopPolling` come in pairs).
/// - A process is its PID and its start time (`ProcessIdentity`): a new process that reuses the
///   PID is another process. One that is gone (exited, or its PID taken by another) stays gone:
///   it is never read again and no longer keeps its followers from running, whatever its group
///   or its last state said.
struct ProcessLifeState<Token: Hashable> {
    /// What the watcher does, in the order given.
    enum Action: Equatable {
        /// Start watching the group's `cgroup.events` for changes; a change is answered with
        /// `readGroup`.
        case watchGroup(String)
        /// Stop watching the group.
        case unwatchGroup(String)
        /// Read the group's `cgroup.events`; answer with `groupEventsRead(_:frozen:)`.
        case readGroup(String)
        /// Read the process's `/proc/PID/stat`; answer with `processStatRead(process:_:)`.
        case readProcess(ProcessIdentity)
        /// Start the poll: `pollTick()` at least once a second.
        case startPolling
        /// Stop the poll.
        case stopPolling
        /// Tell the follower's owner that it can run (`true`) or cannot (`false`) now.
        case notify(Token, canRun: Bool)
    }

    /// One followed process, as one owner follows it.
    struct Follower {
        let process: ProcessIdentity
        /// The group watched for it; `nil` for the root group or none.
        let group: String?
        /// The order of following, for the order of notifications.
        let order: UInt64
        /// What its owner was last told (or assumes: `true` at first).
        var canRun = true
    }

    /// A group with at least one follower.
    struct Group {
        /// Its `frozen` field as last read; `nil` before the first read, or when it could not be read.
        var frozen: Bool?
        /// Its followers, in the order they came.
        var members: [Token] = []
    }

    /// A process with at least one follower.
    struct Process {
        var run: ProcessRunState = .running
        var members: [Token] = []
    }

    private(set) var followers: [Token: Follower] = [:]
    private(set) var groups: [String: Group] = [:]
    private(set) var processes: [ProcessIdentity: Process] = [:]
    /// Whether the poll runs.
    private(set) var isPolling = false
    private var nextOrder: UInt64 = 0

    /// Whether the follower `token` can run, as its owner was told; `true` for one not followed.
    func canRun(_ token: Token) -> Bool { followers[token]?.canRun ?? true }

    /// Whether any followed process is stopped (and not gone): the poll runs exactly then.
    var hasStoppedProcess: Bool { processes.values.contains { $0.run == .stopped } }

    // MARK: Following

    /// Starts following `process` for `token`, in `group` (a path as in `/proc/PID/cgroup`;
    /// `nil` when unknown or when there is no cgroup2 mount). Following a token again is ignored.
    mutating func follow(_ token: Token, process: ProcessIdentity, group: String?) -> [Action] {
        guard followers[token] == nil else { return [] }
        let watched = group.flatMap { $0 == "/" || $0.isEmpty ? nil : $0 }
        followers[token] = Follower(process: process, group: watched, order: nextOrder)
        nextOrder += 1
        processes[process, default: Process()].members.append(token)
        var actions = join(token, watched)
        update([token], into: &actions)
        return actions
    }

    /// `token` a member of `group` (a watch made for its first member); nothing for none.
    private mutating func join(_ token: Token, _ group: String?) -> [Action] {
        guard let group else { return [] }
        var actions: [Action] = []
        if groups[group] == nil {
            groups[group] = Group()
            actions += [.watchGroup(group), .readGroup(group)]
        }
        groups[group]?.members.append(token)
        return actions
    }

    /// `token` no longer a member of `group` (its watch released with its last member).
    private mutating func leave(_ token: Token, _ group: String?) -> [Action] {
        guard let group, var entry = groups[group] else { return [] }
        entry.members.removeAll { $0 == token }
        guard entry.members.isEmpty else {
            groups[group] = entry
            return []
        }
        groups[group] = nil
        return [.unwatchGroup(group)]
    }

    /// Stops following `token`: the last follower of a group releases its watch, and the poll
    /// stops when no stopped process is left. Its owner is not notified.
    mutating func unfollow(_ token: Token) -> [Action] {
        guard let follower = followers.removeValue(forKey: token) else { return [] }
        var actions = leave(token, follower.group)
        if var process = processes[follower.process] {
            process.members.removeAll { $0 == token }
            processes[follower.process] = process.members.isEmpty ? nil : process
        }
        updatePolling(into: &actions)
        return actions
    }

    /// The process of `token` is in `group` now (moved by a user manager): its old group's
    /// watch goes when no follower is left there, the new one is watched and read.
    mutating func moved(_ token: Token, to group: String?) -> [Action] {
        guard let follower = followers[token] else { return [] }
        let watched = group.flatMap { $0 == "/" || $0.isEmpty ? nil : $0 }
        guard watched != follower.group else { return [] }
        var actions = leave(token, follower.group)
        followers[token] = Follower(process: follower.process, group: watched, order: follower.order, canRun: follower.canRun)
        actions += join(token, watched)
        update([token], into: &actions)
        return actions
    }

    // MARK: What was read

    /// The group's `cgroup.events` was read: `frozen` is its `frozen` field, `nil` when the file
    /// could not be read or has none (a removed group, an old kernel), which counts as not frozen.
    mutating func groupEventsRead(_ group: String, frozen: Bool?) -> [Action] {
        guard var entry = groups[group] else { return [] }
        entry.frozen = frozen
        groups[group] = entry
        var actions: [Action] = []
        update(entry.members, into: &actions)
        return actions
    }

    /// The watch of a group told of a change (or the watches lost events): read it again.
    func groupChanged(_ group: String) -> [Action] {
        groups[group] == nil ? [] : [.readGroup(group)]
    }

    /// The watches lost events (an inotify queue overflow): read every group again.
    func allGroupsChanged() -> [Action] {
        groups.keys.sorted().map { .readGroup($0) }
    }

    /// The `/proc/PID/stat` of `process` was read: `state` is what it said (`.gone` too when
    /// the PID now belongs to another process), `nil` when it could not be read or said nothing
    /// clear (then nothing changes).
    mutating func processStatRead(process identity: ProcessIdentity, _ state: ProcessRunState?) -> [Action] {
        guard let state, var process = processes[identity], process.run != .gone, process.run != state else { return [] }
        process.run = state
        processes[identity] = process
        var actions: [Action] = []
        update(process.members, into: &actions)
        updatePolling(into: &actions)
        return actions
    }

    /// The owner wants to know now whether `process` runs (an event is about to go to it).
    func checkRequested(process identity: ProcessIdentity) -> [Action] {
        guard let process = processes[identity], process.run != .gone else { return [] }
        return [.readProcess(identity)]
    }

    /// The poll timer fired: read every stopped process again.
    func pollTick() -> [Action] {
        processes.filter { $0.value.run == .stopped }.keys
            .sorted { ($0.pid, $0.startTime) < ($1.pid, $1.startTime) }.map { .readProcess($0) }
    }

    // MARK: Deriving

    /// Whether `follower` can run, from its group and its process; a process that is gone keeps
    /// nobody from running.
    private func derivedCanRun(_ follower: Follower) -> Bool {
        switch processes[follower.process]?.run {
        case .gone: return true
        case .stopped: return false
        case .running, nil: break
        }
        if let group = follower.group, groups[group]?.frozen == true { return false }
        return true
    }

    /// Notifies each of `tokens` whose derived state differs from what its owner was told, in
    /// the order they were followed.
    private mutating func update(_ tokens: [Token], into actions: inout [Action]) {
        let ordered = tokens.compactMap { token in followers[token].map { (token, $0) } }.sorted { $0.1.order < $1.1.order }
        for (token, follower) in ordered {
            let canRun = derivedCanRun(follower)
            guard canRun != follower.canRun else { continue }
            followers[token]?.canRun = canRun
            actions.append(.notify(token, canRun: canRun))
        }
    }

    /// Starts or stops the poll so that it runs exactly while a followed process is stopped.
    private mutating func updatePolling(into actions: inout [Action]) {
        let wanted = hasStoppedProcess
        guard wanted != isPolling else { return }
        isPolling = wanted
        actions.append(wanted ? .startPolling : .stopPolling)
    }
}
