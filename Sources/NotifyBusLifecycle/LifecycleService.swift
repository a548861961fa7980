import DBus
import EpollLoop
import Logging
import NotifyBus
import NotifyBusSources
import SystemSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Background apps frozen and woken (specification: Freezing background apps), on an existing
/// event loop: the windows from the compositor, the policy, the cgroup freezer, and each app's
/// `app/<app-id>/lifecycle` key on the bus.
///
/// ```swift
/// let lifecycle = LifecycleService(configuration: configuration, bus: bus, loop: loop, logger: logger)
/// try lifecycle.start(onStatus: { _, status in print("lifecycle", status) }, beforeFrozen: { _ in })
/// …
/// await lifecycle.stop()   // every cgroup it froze thawed
/// ```
///
/// The handle is `Sendable`; the driver lives in the loop's storage and runs on the loop thread.
public final class LifecycleService: Sendable {
    /// The name of its source in `Sources`.
    public static let sourceName = LifecycleDriver.sourceName
    /// What it runs with.
    public var configuration: LifecycleConfiguration { slot.configuration }
    /// The bus it publishes into and reads `session/locked` from.
    public var bus: NotificationBus { slot.bus }
    /// The loop it runs on.
    public var loop: EventLoopThread { slot.loop }
    private let slot: LoopDriverSlot<LifecycleConfiguration, LifecycleDriver>

    /// A lifecycle on `loop`; nothing happens before `start`.
    public init(configuration: LifecycleConfiguration, bus: NotificationBus, loop: EventLoopThread, logger: Logger) {
        slot = LoopDriverSlot(configuration: configuration, bus: bus, loop: loop, logger: logger)
    }

    /// Thaws every cgroup listed in the state file at `path` (default
    /// `$XDG_RUNTIME_DIR/notifybus/frozen`) that still exists, and empties it: what a crash or
    /// `SIGKILL` left frozen. notifybusd does it at every start, and `--thaw-all` does only this.
    /// - Returns: each cgroup that could not be thawed, with why.
    public static func thawLeftovers(stateFile path: String? = nil) -> [(group: String, reason: String)] {
        guard let path = path ?? FrozenStateFile.defaultPath else { return [] }
        return FrozenStateFile(path: path).thawAll()
    }

    /// Starts: checks the cgroup root, the freezer and the state file, connects to the
    /// compositor. `onStatus` is told the `lifecycle` source's status on the loop thread each
    /// time it changes; `beforeFrozen` runs on the loop thread just before an app's `frozen` is
    /// published (the daemon makes its freezer follower read the cgroups first). `connection`
    /// gives, on the loop thread, the session bus connection through which the systemd user
    /// manager, the MPRIS players and the protected names are followed (`nil`: none is).
    /// - Throws: `EventLoopError.shutDown` when the loop no longer runs.
    public func start(
        onStatus: @escaping @Sendable (LoopContext, SourceStatus) -> Void,
        beforeFrozen: @escaping @Sendable (LoopContext) -> Void = { _ in },
        connection: @escaping @Sendable (LoopContext) -> DBusConnection? = { _ in nil }
    ) throws(EventLoopError) {
        try slot.start({ slot, context in
            LifecycleDriver(
                configuration: slot.configuration, bus: slot.bus, context: context, logger: slot.logger,
                onStatus: { status in onStatus(context, status) },
                beforeFrozen: { beforeFrozen(context) },
                postLocked: { locked in
                    try? slot.loop.execute { context in context[local: slot.key]?.handle(.locked(locked)) }
                },
                connection: connection(context))
        }, then: { $0.start() })
    }

    /// Stops: thaws every cgroup it froze (before it returns) and lets go of the compositor.
    public func stop() async {
        await slot.key.release(on: slot.loop) { $0.stop() }
    }

    /// What it last published for each app id (for tests and diagnostics); `nil` when it does
    /// not run.
    public func apps() async -> [String: AppLifecycle]? {
        await slot.read { $0.policy.published }
    }
}
