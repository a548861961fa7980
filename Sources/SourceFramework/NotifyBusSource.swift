public import NotifyBus
public import ServiceLifecycle

/// A producer of bus events from the system (udev power supplies; D-Bus sensors, locale,
/// settings): it reads the current state, watches for changes and publishes them.
///
/// The shape every built-in source shares (each is a `SystemSource`), so that an app runs
/// several side by side. A source is a swift-service-lifecycle `Service`:
/// ```swift
/// let sources = SystemSources.all(bus: bus)
/// let group = ServiceGroup(configuration: .init(
///     services: sources.map { .init(service: $0) }, gracefulShutdownSignals: [.sigterm], logger: logger))
/// try await group.run()       // until SIGTERM; after SIGCONT, `await source.reread()` for each
/// ```
/// or in a task group, cancelled to stop them.
public protocol NotifyBusSource: Service {
    /// A short name for messages and logs, e.g. `"power"`.
    var name: String { get }
    /// The patterns of the keys it publishes, e.g. `battery/*/state`.
    var keyPatterns: [KeyPattern] { get }
    /// The status it last reported (`SourceStatus.notStarted` before `run()`).
    var status: SourceStatus { get }
    /// The current status, then every change, until `run()` returns.
    func statusUpdates() -> AsyncStream<SourceStatus>
    /// Reads the whole state again and publishes what differs from the bus's store; returns when
    /// done. Call it after any gap in watching (the process was stopped, say). Does nothing when
    /// the source is not running.
    func reread() async
    /// Reads the current state, publishes it, then watches and publishes changes until the task
    /// is cancelled or graceful shutdown begins; then releases everything and returns. Missing
    /// hardware or access is reported through `status`, not thrown.
    /// - Throws: `SourceError` when it cannot run at all.
    func run() async throws
}

/// Why a source could not run.
public enum SourceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `run()` was called while the source was already running.
    case alreadyRunning(source: String)
    /// The event loop could not be started, or stopped under the source.
    case eventLoop(source: String, reason: String)

    /// The error in words.
    public var description: String {
        switch self {
        case .alreadyRunning(let source): "source \(source) is already running"
        case .eventLoop(let source, let reason): "source \(source): event loop: \(reason)"
        }
    }
}
