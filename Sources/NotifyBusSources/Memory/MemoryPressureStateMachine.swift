/// The memory source as a plain state: the level, whether the triggers are armed, and what each
/// event makes the watcher do. No descriptor, timer or thread of its own: tests drive it directly.
///
/// The rules it keeps (specification: Source keys and values):
/// - `"normal"` is published once the triggers are armed, and `running` reported after it.
/// - A `some` trigger raises the level to `"warning"`, a `full` one to `"critical"`; the level is
///   the highest triggered since the last `"normal"`, never lowered by a weaker trigger.
/// - Each trigger event restarts the return timer; when it fires the level falls to `"normal"`.
///   The timer runs only while the level is not `"normal"`.
struct MemoryPressureStateMachine: Sendable {
    /// A published level, in rising order.
    enum Level: Int, Comparable, Sendable, CaseIterable {
        case normal, warning, critical

        /// The value of `memory/pressure`.
        var name: String {
            switch self {
            case .normal: "normal"
            case .warning: "warning"
            case .critical: "critical"
            }
        }

        static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
    }

    /// A PSI trigger: `some` tasks stalled, or `full`: all of them.
    enum Trigger: String, Sendable, CaseIterable {
        case some, full

        /// The level it raises to.
        var level: Level { self == .some ? .warning : .critical }
    }

    /// What the watcher does, in the order given.
    enum Action: Equatable, Sendable {
        /// Publish `memory/pressure` (if it differs from the bus's value).
        case publish(Level)
        /// Report the source's status.
        case reportStatus(SourceStatus)
        /// Start the return timer, or start it again from now; answer with `returnTimerFired()`.
        case restartReturnTimer
        /// Stop the return timer.
        case cancelReturnTimer
        /// Close the triggers' descriptors and stop watching them.
        case closeTriggers
    }

    /// The level last published; `nil` before the triggers were first armed.
    private(set) var level: Level?
    /// Whether the triggers are armed and watched.
    private(set) var isArmed = false

    /// Both triggers are armed and watched: `"normal"` unless a level is being held, then running.
    mutating func armed() -> [Action] {
        isArmed = true
        var actions: [Action] = []
        if level == nil {
            level = .normal
            actions.append(.publish(.normal))
        }
        actions.append(.reportStatus(.running))
        return actions
    }

    /// The triggers could not be armed (`reason` says why, with the kernel's error).
    mutating func armingFailed(_ reason: String) -> [Action] {
        isArmed = false
        return [.closeTriggers, .reportStatus(.unavailable(reason: reason))]
    }

    /// A trigger fired.
    mutating func triggered(_ trigger: Trigger) -> [Action] {
        guard isArmed else { return [] }
        var actions: [Action] = []
        if trigger.level > level ?? .normal {
            level = trigger.level
            actions.append(.publish(trigger.level))
        }
        actions.append(.restartReturnTimer)
        return actions
    }

    /// 10 s passed since the last trigger event: back to `"normal"`.
    mutating func returnTimerFired() -> [Action] {
        guard let level, level != .normal else { return [] }
        self.level = .normal
        return [.publish(.normal)]
    }

    /// A trigger's descriptor reports an error (the file went away: a cgroup removed). The level
    /// still falls to `"normal"` when its timer fires.
    mutating func triggerFailed(_ reason: String) -> [Action] {
        guard isArmed else { return [] }
        return armingFailed(reason)
    }

    /// The source stops.
    mutating func stopped() -> [Action] {
        isArmed = false
        return [.cancelReturnTimer, .closeTriggers]
    }
}
