import EpollLoop
import NotifyBus
import Synchronization

/// The loop-side part of a source: created, used and released on one `EventLoopThread`.
protocol LoopWatcher: AnyObject, SendableMetatype {
    /// Starts watching.
    func start(in context: LoopContext)
    /// Stops watching, releases what it holds (claims, connections), then calls `done`.
    func stop(in context: LoopContext, then done: @escaping () -> Void)
    /// Reads the whole state again, publishes differences, then calls `done`.
    func reread(then done: @escaping () -> Void)
}

/// A watcher made from its source's bus and configuration, reporting status and problems: the
/// D-Bus sources' watchers, which `LoopSourceHost.run(bus:configuration:problems:)` makes alike.
protocol ConfiguredWatcher: LoopWatcher {
    associatedtype Configuration: Sendable
    init(
        bus: NotificationBus, configuration: Configuration, context: LoopContext,
        report: @escaping (SourceStatus) -> Void, problem: @escaping (String) -> Void)
}

extension LoopSourceHost where Watcher: ConfiguredWatcher {
    /// Runs a watcher made from `bus` and `configuration` until the task is cancelled, its
    /// status going to `reporter` and what it skips to `problems`.
    func run(bus: NotificationBus, configuration: Watcher.Configuration, problems: SourceProblemLog) async throws {
        let reporter = self.reporter
        try await run { context in
            Watcher(
                bus: bus, configuration: configuration, context: context,
                report: { reporter.report($0) }, problem: { problems.report($0) })
        }
    }
}

/// What every loop-based source does around its watcher: the loop (shared or its own), the
/// running flag, `run()` until cancelled, `reread()`.
final class LoopSourceHost<Watcher: LoopWatcher>: Sendable {
    let name: String
    let sharedLoop: EventLoopThread?
    let reporter = SourceStatusReporter()
    private let running = Mutex<Running?>(nil)

    private struct Running: Sendable {
        let loop: EventLoopThread
        let key: LoopLocalKey<Watcher>
    }

    init(name: String, loop: EventLoopThread?) {
        self.name = name
        self.sharedLoop = loop
    }

    /// Runs a watcher made by `make` (on the loop) until the task is cancelled.
    func run(make: @escaping @Sendable (LoopContext) -> Watcher) async throws {
        let key = LoopLocalKey<Watcher>()
        let loop: EventLoopThread
        do {
            loop = try sharedLoop ?? EventLoopThread(name: name)
        } catch {
            reporter.report(.failed(reason: "event loop: \(error)"))
            reporter.finish()
            throw SourceError.eventLoop(source: name, reason: "\(error)")
        }
        let ownsLoop = sharedLoop == nil
        let claimed = running.withLock { running -> Bool in
            guard running == nil else { return false }
            running = Running(loop: loop, key: key)
            return true
        }
        guard claimed else {
            if ownsLoop { await loop.shutdown() }
            throw SourceError.alreadyRunning(source: name)
        }
        do {
            try await loop.submit { context in
                let watcher = make(context)
                context[local: key] = watcher
                watcher.start(in: context)
            }
        } catch {
            running.withLock { $0 = nil }
            reporter.report(.failed(reason: "event loop: \(error)"))
            reporter.finish()
            if ownsLoop { await loop.shutdown() }
            throw SourceError.eventLoop(source: name, reason: "\(error)")
        }

        await waitUntilCancelled()

        running.withLock { $0 = nil }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            do {
                try loop.execute { context in
                    guard let watcher = context[local: key] else {
                        continuation.resume()
                        return
                    }
                    watcher.stop(in: context) {
                        context[local: key] = nil
                        continuation.resume()
                    }
                }
            } catch {
                continuation.resume()  // the loop is gone, and the watcher with it
            }
        }
        if ownsLoop { await loop.shutdown() }
        reporter.finish()
    }

    /// Asks the running watcher to read everything again; returns when it is done.
    func reread() async {
        guard let running = running.withLock({ $0 }) else { return }
        let key = running.key
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            do {
                try running.loop.execute { context in
                    guard let watcher = context[local: key] else {
                        continuation.resume()
                        return
                    }
                    watcher.reread { continuation.resume() }
                }
            } catch {
                continuation.resume()
            }
        }
    }
}

/// Calls `done` once, when `count` completions have been signalled (at once for 0).
final class Countdown {
    private var remaining: Int
    private var done: (() -> Void)?

    init(_ count: Int, done: @escaping () -> Void) {
        remaining = count
        self.done = done
        if count <= 0 { fire() }
    }

    func signal() {
        remaining -= 1
        if remaining <= 0 { fire() }
    }

    func fire() {
        let done = self.done
        self.done = nil
        done?()
    }
}
