/// After each event: which cgroups to freeze or thaw, what each app's key says now, and the one
/// deadline.
extension LifecyclePolicy {
    /// Everything that follows from the state at `now`: publishes first (so `foreground` leaves
    /// before the thaw is written), then thaws, freezes and the deadline.
    mutating func settle(now: Duration, before: [Action]) -> [Action] {
        var windowsOfGroup: [String: [TrackedWindow]] = [:]
        var windowsOfApp: [String: [TrackedWindow]] = [:]
        for tracked in windows.values.sorted(by: { $0.window.id < $1.window.id }) {
            windowsOfApp[tracked.window.appID, default: []].append(tracked)
            for path in Set(tracked.window.groups) { windowsOfGroup[path, default: []].append(tracked) }
        }

        var thaws: [Action] = []
        var freezes: [Action] = []
        var (signals, deadlines) = settleTasks(now: now, windowsOfGroup: windowsOfGroup)
        for path in groups.keys.sorted() {
            guard var group = groups[path] else { continue }
            guard let members = windowsOfGroup[path] else {
                // Its last window closed.
                if group.freezing != .running { thaws.append(.thaw(group: path)) }
                groups[path] = nil
                continue
            }
            let active = members.contains { $0.inactiveSince == nil }
            if active { group.hold = nil }
            if let woken = group.wokenAt {
                if active || now >= woken + wakeGrace {
                    group.wokenAt = nil
                } else {
                    deadlines.append(woken + wakeGrace)
                }
            }
            // Held running, without restarting the count: an open task, a wake grace.
            let held = group.wokenAt != nil || hasTask(path)
            let blocked = blockingReason(of: path, members: members, windowsOfApp: windowsOfApp)
            if group.wasBlocked, blocked == nil { group.reasonEndedAt = now }
            group.wasBlocked = blocked != nil
            switch group.freezing {
            case .running:
                if !active, blocked == nil, group.hold == nil, !held {
                    let due = since(group, members) + delay
                    if now >= due {
                        group.freezing = .pending(since: now)
                        freezes.append(.freeze(group: path))
                        deadlines.append(now + confirmationTime)
                    } else {
                        deadlines.append(due)
                    }
                }
            case .pending(let asked):
                if active || blocked != nil || held {
                    group.freezing = .running
                    thaws.append(.thaw(group: path))
                } else if now >= asked + confirmationTime {
                    group.freezing = .running
                    group.hold = .failed
                    thaws.append(.thaw(group: path))
                } else {
                    deadlines.append(asked + confirmationTime)
                }
            case .frozen:
                if active || blocked != nil || held {
                    group.freezing = .running
                    thaws.append(.thaw(group: path))
                }
            }
            groups[path] = group
        }

        var publishes: [Action] = []
        for appID in Set(published.keys).union(windowsOfApp.keys).sorted() {
            let members = windowsOfApp[appID] ?? []
            let lifecycle: AppLifecycle
            if members.isEmpty {
                lifecycle = AppLifecycle(.closed)
            } else {
                let (value, due) = self.lifecycle(of: appID, members: members, windowsOfGroup: windowsOfGroup, now: now)
                lifecycle = value
                if let due { deadlines.append(due) }
            }
            guard published[appID] != lifecycle else { continue }
            published[appID] = lifecycle
            publishes.append(.publish(appID: appID, lifecycle))
        }

        var timer: [Action] = []
        let deadline = deadlines.filter { $0 > now }.min()
        if deadline != armed {
            armed = deadline
            timer = [deadline.map(Action.arm) ?? .disarm]
        }
        return before + signals + publishes + thaws + freezes + timer
    }

    /// When the group's count started: the later of its windows' last activation and the last
    /// restart of its count.
    private func since(_ group: Group, _ members: [TrackedWindow]) -> Duration {
        var start = max(group.restartedAt, group.reasonEndedAt ?? group.restartedAt)
        for member in members { if let inactive = member.inactiveSince { start = max(start, inactive) } }
        return start
    }

    /// The first reason that keeps the group running, of those that belong to the group rather
    /// than to its windows' timing.
    private func blockingReason(
        of path: String, members: [TrackedWindow], windowsOfApp: [String: [TrackedWindow]]
    ) -> AppLifecycle.Reason? {
        let apps = Set(members.map(\.window.appID))
        if !apps.isDisjoint(with: exempt) { return .exempt }
        if apps.contains(where: { app in windowsOfApp[app]?.contains { $0.window.groups.isEmpty } ?? false }) {
            return .noAppUnit
        }
        if Self.holds(path, anyOf: protectedGroups) { return .protected }
        if Self.holds(path, anyOf: playingGroups) { return .media }
        return nil
    }

    /// Whether the cgroup `path` is one of `groups` or an ancestor of one.
    static func holds(_ path: String, anyOf groups: Set<String>) -> Bool {
        groups.contains(path) || groups.contains { $0.hasPrefix(path.hasSuffix("/") ? path : path + "/") }
    }

    /// The app's value now, and when it next changes by the clock alone (its reason appearing
    /// at the end of its delay), if it will.
    private func lifecycle(
        of appID: String, members: [TrackedWindow], windowsOfGroup: [String: [TrackedWindow]], now: Duration
    ) -> (AppLifecycle, Duration?) {
        if members.contains(where: { $0.inactiveSince == nil }) { return (AppLifecycle(.foreground), nil) }
        let paths = Set(members.flatMap(\.window.groups))
        let mapped = !members.contains { $0.window.groups.isEmpty }
        if mapped, !paths.isEmpty, paths.allSatisfy({ groups[$0]?.freezing == .frozen }) {
            return (AppLifecycle(.frozen), nil)
        }
        var pastDelayAt = members.compactMap(\.inactiveSince).max() ?? now
        for path in paths { if let ended = groups[path]?.reasonEndedAt { pastDelayAt = max(pastDelayAt, ended) } }
        pastDelayAt = pastDelayAt + delay
        guard now >= pastDelayAt else { return (AppLifecycle(.background), pastDelayAt) }
        return (AppLifecycle(.background, reason: reason(of: appID, mapped: mapped, paths: paths, windowsOfGroup: windowsOfGroup, now: now)), nil)
    }

    /// The first reason that applies to an app past its delay in the background, if any.
    private func reason(
        of appID: String, mapped: Bool, paths: Set<String>, windowsOfGroup: [String: [TrackedWindow]], now: Duration
    ) -> AppLifecycle.Reason? {
        if exempt.contains(appID) { return .exempt }
        if !mapped || paths.isEmpty { return .noAppUnit }
        if paths.contains(where: { Self.holds($0, anyOf: protectedGroups) }) { return .protected }
        if paths.contains(where: { Self.holds($0, anyOf: playingGroups) }) { return .media }
        let shared = paths.contains { path in
            (windowsOfGroup[path] ?? []).contains { other in
                guard other.window.appID != appID else { return false }
                guard let inactive = other.inactiveSince else { return true }
                return now < inactive + delay || keepsItsCgroupsRunning(other)
            }
        }
        if shared { return .shared }
        if paths.contains(where: hasTask) { return .task }
        if paths.contains(where: { groups[$0]?.wokenAt != nil }) { return .woken }
        if paths.contains(where: { groups[$0]?.hold == .failed }) { return .failed }
        return nil
    }

    /// Whether the window's own app keeps its cgroups running (it is exempt, or has no app unit).
    private func keepsItsCgroupsRunning(_ window: TrackedWindow) -> Bool {
        exempt.contains(window.window.appID) || window.window.groups.isEmpty
    }
}
