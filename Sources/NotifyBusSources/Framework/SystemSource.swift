import EpollLoop
public import Logging
public import NotifyBus
import Synchronization
import SystemSupport

/// The one shape of every built-in source: a name, the patterns of its keys, the bus it
/// publishes to, its configuration, a status, and a watcher that lives on a `SourceLoop`.
///
/// Each built-in source is a configuration of it: `PowerSupplySource` is
/// `SystemSource<PowerSupplyConfiguration>`, `LocaleSource` is
/// `SystemSource<LocaleConfiguration>`, and so on. The configuration names the source, its keys
/// and its watcher (`SystemSourceConfiguration.source`), so one initializer makes every one of
/// them: `LocaleSource(bus: bus)`. `SystemSources.all(bus:options:)` makes them all at once.
///
/// It is a `Service`: `run()` returns when its task is cancelled or, in a `ServiceGroup`, when
/// graceful shutdown begins.
///
/// What a source skips (input of the wrong type, a malformed signal, a failed call) is logged
/// at `warning`; what is normal where it happens (a service not installed, a fallback taken)
/// and each status change at `debug`; through `logger`, with the metadata `source` (the name),
/// and `key` and `peer` (a D-Bus name) where they are known.
public final class SystemSource<Settings: SystemSourceConfiguration>: NotifyBusSource {
    /// The type of its configuration, e.g. `PowerSupplyConfiguration`.
    public typealias Configuration = Settings

    /// A short name for messages and logs, e.g. `"power"`.
    public let name: String
    /// The patterns of the keys it publishes.
    public let keyPatterns: [KeyPattern]
    /// The bus it publishes to.
    public let bus: NotificationBus
    /// Its configuration.
    public let configuration: Configuration
    /// Where it logs what it skips and its status changes (metadata `source` is its name).
    public let logger: Logger
    /// The loop its watcher runs on.
    public let loop: SourceLoop

    private let reporter = SourceStatusReporter()
    private let running = Mutex<Running?>(nil)

    private struct Running: Sendable {
        let thread: EventLoopThread
        let key: LoopLocalKey<any LoopWatcher>
    }

    /// Creates the source that `configuration` configures (`Configuration.source`); nothing
    /// happens until `run()`.
    ///
    /// ```swift
    /// let locale = LocaleSource(bus: bus)
    /// let power = PowerSupplySource(bus: bus, loop: loop, configuration: .init(rereadInterval: nil))
    /// ```
    /// - Parameters:
    ///   - bus: where to publish.
    ///   - loop: the loop to keep its system objects on (D-Bus connection, libudev objects, file
    ///     watches, timers), shared with other sources; when `nil`, `run()` starts a loop of its
    ///     own and stops it on return.
    ///   - configuration: how it behaves (bus address, timeouts, what to watch); by default
    ///     `Configuration()`.
    ///   - logger: where to log what it skips and its status changes; by default
    ///     `notifybus.source.<name>`.
    public init(
        bus: NotificationBus, loop: SourceLoop? = nil, configuration: Configuration = Configuration(),
        logger: Logger? = nil
    ) {
        let name = Configuration.source.name
        self.name = name
        keyPatterns = Configuration.source.keyPatterns
        self.bus = bus
        self.configuration = configuration
        self.loop = loop ?? .onDemand(name: name)
        var logger = logger ?? Logger(label: "notifybus.source.\(name)")
        logger[metadataKey: "source"] = .string(name)
        self.logger = logger
    }

    /// The status it last reported (`SourceStatus.notStarted` before `run()`).
    public var status: SourceStatus { reporter.current }

    /// The current status, then every change, until `run()` returns.
    public func statusUpdates() -> AsyncStream<SourceStatus> { reporter.updates() }

    /// Reads the current state, publishes it, then watches and publishes changes until the task
    /// is cancelled or graceful shutdown begins; then releases everything and returns.
    /// - Throws: `SourceError.alreadyRunning` if it is running already; `SourceError.eventLoop`
    ///   when its event loop cannot start or was shut down under it.
    public func run() async throws {
        let thread: EventLoopThread
        do {
            thread = try loop.acquire()
        } catch {
            fail(reason: "event loop: \(error)")
            throw SourceError.eventLoop(source: name, reason: "\(error)")
        }
        let key = LoopLocalKey<any LoopWatcher>()
        let claimed = running.withLock { running -> Bool in
            guard running == nil else { return false }
            running = Running(thread: thread, key: key)
            return true
        }
        guard claimed else {
            await loop.release(thread)
            throw SourceError.alreadyRunning(source: name)
        }
        let hooks = makeHooks()
        let (bus, configuration) = (self.bus, self.configuration)
        do {
            _ = try await key.runUntilCancelled(on: thread) { context in
                let watcher = Configuration.source.makeWatcher(bus, configuration, context, hooks)
                watcher.start(in: context)
                return watcher
            } stop: { [self] watcher, context, done in
                running.withLock { $0 = nil }
                watcher.stop(in: context, then: done)
            }
        } catch {
            running.withLock { $0 = nil }
            fail(reason: "event loop: \(error)")
            await loop.release(thread)
            throw SourceError.eventLoop(source: name, reason: "\(error)")
        }
        running.withLock { $0 = nil }
        await loop.release(thread)
        reporter.finish()
    }

    /// Reads the whole state again and publishes what differs from the bus's store; returns when
    /// done. Does nothing when the source is not running.
    public func reread() async {
        guard let running = running.withLock({ $0 }) else { return }
        await running.key.withValue(on: running.thread) { watcher, _, done in watcher.reread(then: done) }
    }

    /// The watcher's hooks: status changes to the reporter and the log, problems to the log.
    private func makeHooks() -> SourceHooks {
        let reporter = self.reporter
        let logger = self.logger
        return SourceHooks(
            report: { status in
                if reporter.report(status) { logger.debug("status: \(status)") }
            },
            problem: SourceProblems(logger: logger, key: Configuration.source.problemKey))
    }

    private func fail(reason: String) {
        let status = SourceStatus.failed(reason: reason)
        if reporter.report(status) { logger.error("status: \(status)") }
        reporter.finish()
    }
}
