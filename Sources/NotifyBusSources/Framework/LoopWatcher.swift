import EpollLoop
import NotifyBus

/// The loop-side part of a source: created, used and released on one `EventLoopThread`.
protocol LoopWatcher: AnyObject, SendableMetatype {
    /// Starts watching.
    func start(in context: LoopContext)
    /// Stops watching, releases what it holds (claims, connections), then calls `done`.
    func stop(in context: LoopContext, then done: @escaping () -> Void)
    /// Reads the whole state again, publishes differences, then calls `done`.
    func reread(then done: @escaping () -> Void)
}

/// A watcher made from its source's bus and configuration, reporting status and what it skips
/// through the source's hooks: what a `SystemSourceDefinition` makes at each `run()`.
protocol ConfiguredWatcher: LoopWatcher {
    associatedtype Configuration: Sendable
    init(bus: NotificationBus, configuration: Configuration, context: LoopContext, hooks: SourceHooks)
}

/// What a running source hands its watcher: where to report its status and what it skips.
struct SourceHooks: Sendable {
    /// Makes a status current (and logs the change).
    let report: @Sendable (SourceStatus) -> Void
    /// Logs what was skipped.
    let problem: SourceProblems
}
