package import DBus
package import EpollLoop
package import Logging
package import NotifyBus
package import SourceFramework
import SystemSupport

/// Background apps frozen and woken (specification: Freezing background apps), as a source of
/// the daemon's bus: the windows from the compositor, the policy, the freezer, the messages that
/// wake a frozen app, background tasks, and each app's `app/<app-id>/lifecycle` key.
///
/// A `NotifyBusSource` like the others: `run()` starts it on `loop` and returns when its task is
/// cancelled or graceful shutdown begins, once it has thawed every cgroup it froze.
///
/// ```swift
/// let lifecycle = LifecycleSource(configuration: configuration, bus: bus, loop: loop, logger: logger,
///                                 connection: { context in sessionConnection })
/// try await lifecycle.run()   // in the daemon's task group
/// ```
package final class LifecycleSource: NotifyBusSource {
    /// The name of its source in `Sources`.
    package static let sourceName = "lifecycle"
    /// `lifecycle`.
    package let name = LifecycleSource.sourceName
    /// `app/*/lifecycle`.
    package let keyPatterns: [KeyPattern] = ["app/*/lifecycle"]
    /// What it runs with.
    package let configuration: LifecycleConfiguration
    /// The bus it publishes into and reads `session/locked` from.
    package let bus: NotificationBus
    /// Where it logs.
    package let logger: Logger
    private let connection: @Sendable (LoopContext) -> DBusConnection?
    private let beforeFrozen: @Sendable (LoopContext) -> Void
    private let afterMove: @Sendable (LoopContext) -> Void
    private let host: LoopDriverHost<LifecycleDriver>

    /// A lifecycle on `loop`; nothing happens before `run()`. `connection` gives, on the loop
    /// thread, the session bus connection (the daemon's own): the systemd user manager, the
    /// protected names, the media players, the bus's connections and the monitor for messages to
    /// frozen apps are followed through it; without one, nothing is frozen. `beforeFrozen` runs on
    /// the loop thread just before an app's `frozen` is published (the daemon makes its freezer
    /// follower read the cgroups first, so the app's own subscriptions are suspended first);
    /// `afterMove` runs there after a process was moved into a scope the lifecycle made (the
    /// daemon's follower reads its processes' cgroups again).
    package init(
        configuration: LifecycleConfiguration, bus: NotificationBus, loop: EventLoopThread, logger: Logger,
        connection: @escaping @Sendable (LoopContext) -> DBusConnection?,
        beforeFrozen: @escaping @Sendable (LoopContext) -> Void = { _ in },
        afterMove: @escaping @Sendable (LoopContext) -> Void = { _ in }
    ) {
        self.afterMove = afterMove
        self.configuration = configuration
        self.bus = bus
        self.logger = logger
        host = LoopDriverHost(name: Self.sourceName, loop: loop)
        self.connection = connection
        self.beforeFrozen = beforeFrozen
    }

    /// The status it last reported.
    package var status: SourceStatus { host.reporter.current }

    /// The current status, then every change, until `run()` returns.
    package func statusUpdates() -> AsyncStream<SourceStatus> { host.reporter.updates() }

    /// Nothing to read again: the compositor and the kernel report every change as it happens.
    package func reread() async {}

    /// Starts on the loop, then runs until cancelled or graceful shutdown; then thaws every
    /// cgroup it froze and lets go of everything before it returns.
    /// - Throws: `SourceError.alreadyRunning` if it runs already; `SourceError.eventLoop` when the
    ///   loop no longer runs.
    package func run() async throws {
        let (host, bus, configuration, logger) = (self.host, self.bus, self.configuration, self.logger)
        let (connection, beforeFrozen, afterMove) = (self.connection, self.beforeFrozen, self.afterMove)
        try await host.run { context in
            let driver = LifecycleDriver(
                configuration: configuration, bus: bus, context: context, logger: logger,
                report: { status in if host.reporter.report(status) { logger.debug("lifecycle: \(status)") } },
                beforeFrozen: { beforeFrozen(context) }, afterMove: { afterMove(context) },
                postLocked: { locked in try? host.loop.execute { context in context[local: host.key]?.handle(.locked(locked)) } },
                connection: connection(context))
            driver.start()
            return driver
        } stop: { driver, done in
            driver.stop()
            done()
        }
    }

    /// The interface `org.notifybus.Lifecycle1` (background tasks), for the daemon's object at
    /// `/org/notifybus/Bus1`; made on the loop thread, whose `context` it is. Its calls reach the
    /// running lifecycle, and fail while it does not run.
    package func busInterface(in context: LoopContext) -> DBusInterface {
        LifecycleDriver.busInterface { [key = host.key, unowned context] in context[local: key] }
    }

    /// Thaws every cgroup listed in the state file at `path` (default
    /// `$XDG_RUNTIME_DIR/notifybus/frozen`) that still exists, and empties it: what a crash or
    /// `SIGKILL` left frozen. notifybusd does it at every start, and `--thaw-all` does only this.
    /// - Returns: each cgroup that could not be thawed, with why.
    package static func thawLeftovers(stateFile path: String? = nil) -> [(group: String, reason: String)] {
        guard let path = path ?? FrozenStateFile.defaultPath else { return [] }
        return FrozenStateFile(path: path).thawAll()
    }

    /// What it last published for each app id (for tests and diagnostics); `nil` when it does
    /// not run.
    package func apps() async -> [String: AppLifecycle]? {
        await host.read { $0.policy.published }
    }
}
