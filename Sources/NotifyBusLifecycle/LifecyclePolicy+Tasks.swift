/// Background tasks (specification: Freezing background apps, "Background time"): a task keeps
/// its app's cgroup running in the background for at most `taskLimit`, counted from the later
/// of its beginning and the moment the app left the foreground; `.expiring` goes to its
/// connection `expiryWarning` before the end (at once if less is left), and the task ends then.
extension LifecyclePolicy {
    /// An open task.
    struct BackgroundTask: Sendable, Hashable {
        /// Its app's cgroup.
        var group: String
        /// The connection that began it (its unique name), which alone may end it.
        var connection: String
        /// When it began.
        var begunAt: Duration
        /// Whether `.expiring` was sent for the count running now.
        var warned = false
    }

    /// A task granted.
    package struct TaskGrant: Sendable, Hashable {
        /// Its number, for `EndBackgroundTask`.
        package var task: UInt32
        /// The time granted, in whole seconds.
        package var seconds: UInt32
    }

    /// Why a task was not begun or ended.
    package enum TaskRefusal: Error, Sendable, Hashable {
        /// The app has `tasksPerApp` open tasks.
        case tooMany
        /// The task is not the caller's own, or no longer open.
        case notOpen
    }

    /// Begins a task for the app whose cgroup is `group`, asked by `connection`.
    package mutating func beginTask(group: String, connection: String, now: Duration) -> (Result<TaskGrant, TaskRefusal>, [Action]) {
        guard !isStopped else { return (.failure(.notOpen), []) }
        guard tasks.values.filter({ $0.group == group }).count < Self.tasksPerApp else { return (.failure(.tooMany), []) }
        var number = nextTask
        while number == 0 || tasks[number] != nil { number &+= 1 }
        nextTask = number &+ 1
        tasks[number] = BackgroundTask(group: group, connection: connection, begunAt: now)
        let seconds = UInt32(clamping: taskLimit.components.seconds)
        return (.success(TaskGrant(task: number, seconds: seconds)), settle(now: now, before: []))
    }

    /// Ends the task `number`, if it is `connection`'s and open.
    package mutating func endTask(_ number: UInt32, connection: String, now: Duration) -> (Result<Void, TaskRefusal>, [Action]) {
        guard let task = tasks[number], task.connection == connection else { return (.failure(.notOpen), []) }
        tasks[number] = nil
        return (.success(()), settle(now: now, before: []))
    }

    /// The number of open tasks (for tests and diagnostics).
    package var openTasks: Int { tasks.count }

    /// Whether a task of the cgroup `path` is open.
    func hasTask(_ path: String) -> Bool {
        tasks.values.contains { $0.group == path }
    }

    /// The tasks' warnings and ends due at `now`, and the deadlines of those to come. A task's
    /// count runs while none of its cgroup's windows is activated.
    mutating func settleTasks(now: Duration, windowsOfGroup: [String: [TrackedWindow]]) -> (actions: [Action], deadlines: [Duration]) {
        var actions: [Action] = []
        var deadlines: [Duration] = []
        for number in tasks.keys.sorted() {
            guard var task = tasks[number] else { continue }
            let members = windowsOfGroup[task.group] ?? []
            if members.contains(where: { $0.inactiveSince == nil }) {
                // In the foreground: the count starts again when the app leaves it.
                task.warned = false
                tasks[number] = task
                continue
            }
            let left = members.compactMap(\.inactiveSince).max() ?? task.begunAt
            let end = max(task.begunAt, left) + taskLimit
            if !task.warned, now >= end - Self.expiryWarning {
                task.warned = true
                let remaining = max(end - now, .zero)
                let milliseconds = remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000
                let seconds = UInt32(clamping: (milliseconds + 999) / 1000)
                actions.append(.expiring(task: number, connection: task.connection, seconds: seconds))
            }
            if now >= end {
                tasks[number] = nil
                continue
            }
            tasks[number] = task
            if !task.warned { deadlines.append(end - Self.expiryWarning) }
            deadlines.append(end)
        }
        return (actions, deadlines)
    }
}
