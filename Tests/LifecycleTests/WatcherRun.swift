import EpollLoop
@testable import NotifyBusLifecycle
import Synchronization
import TestSupport
import Wayland

#if canImport(Glibc)
import Glibc
#endif

private let watcherRunSerial = Atomic(0)

// MARK: The loop thread's sleep

/// The id of this process's only thread named `name` (/proc/self/task/TID/comm).
func threadID(named name: String) -> Int32? {
    guard let directory = opendir("/proc/self/task") else { return nil }
    defer { closedir(directory) }
    var found: [Int32] = []
    while let entry = readdir(directory) {
        let tid = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            Int32(String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self))
        }
        guard let tid, let comm = readFile("/proc/self/task/\(tid)/comm") else { continue }
        if comm.split(separator: "\n").first.map(String.init) == name { found.append(tid) }
    }
    return found.count == 1 ? found[0] : nil
}

/// The voluntary and involuntary context switches of a thread of this process, from
/// /proc/self/task/TID/status.
func contextSwitches(ofThread thread: Int32) -> Int? {
    guard let status = readFile("/proc/self/task/\(thread)/status") else { return nil }
    var total = 0
    for line in status.split(separator: "\n") where line.contains("ctxt_switches:") {
        total += Int(line.split(separator: ":").last?.trimmingPrefix(while: { $0 == " " || $0 == "\t" }) ?? "") ?? 0
    }
    return total
}

// MARK: A watcher on its own loop

/// An update as the test saw it, with when it arrived.
struct StampedUpdate: Sendable {
    var at: ContinuousClock.Instant
    var update: ToplevelUpdate

    var windows: [ToplevelWindow]? {
        if case .windows(let windows) = update { windows } else { nil }
    }
    var lostReason: String? {
        if case .lost(let reason) = update { reason } else { nil }
    }
}

/// A Wayland window backend as the watcher runs take it.
protocol WaylandWatcher: AnyObject, SendableMetatype {
    init(
        context: LoopContext, display: String?, registryTimeout: Duration, onUpdate: @escaping (ToplevelUpdate) -> Void
    ) throws(WaylandError)
    static var registryTimeout: Duration { get }
    var compositorPID: Int32? { get }
    var isConnected: Bool { get }
    func stop()
}

extension ToplevelWatcher: WaylandWatcher {}

/// The wlr backend on a loop of its own.
typealias WlrWatcherRun = WatcherRun<WlrToplevelWatcher>
/// The kde backend on a loop of its own.
typealias KdeWatcherRun = WatcherRun<KdeToplevelWatcher>

/// A Wayland window backend on an `EventLoopThread` of its own, its updates recorded.
final class WatcherRun<Watcher: WaylandWatcher>: Sendable {
    let loop: EventLoopThread
    let updates = Recorder<StampedUpdate>()
    let compositorPID: Int32?
    private let key = LoopLocalKey<Watcher>()
    private let consumed = Mutex(0)

    /// The watcher on `display`, its registry round trip bounded by `registryTimeout` (the
    /// watcher's own by default).
    init(display: String, registryTimeout: Duration = Watcher.registryTimeout) async throws {
        loop = try EventLoopThread(name: "watch-\(watcherRunSerial.add(1, ordering: .relaxed).newValue)")
        let updates = updates
        let key = key
        let outcome = try await loop.submit { context -> Result<Int32?, WaylandError> in
            do throws(WaylandError) {
                let watcher = try Watcher(context: context, display: display, registryTimeout: registryTimeout) { update in
                    updates.append(StampedUpdate(at: .now, update: update))
                }
                context[local: key] = watcher
                return .success(watcher.compositorPID)
            } catch {
                return .failure(error)
            }
        }
        compositorPID = try outcome.get()
    }

    /// The error a watcher's start on `display` throws (a `WaylandError`); `nil` when it starts.
    static func connectionError(display: String) async throws -> WaylandError? {
        do {
            try await WatcherRun(display: display).stop()
            return nil
        } catch let error as WaylandError {
            return error
        }
    }

    /// The next `.windows` update not yet taken.
    func nextWindows(timeout: Duration = .seconds(10)) async -> [ToplevelWindow]? {
        let start = consumed.withLock { $0 }
        guard await updates.wait(timeout: timeout, until: { $0.count > start }) else { return nil }
        consumed.withLock { $0 = start + 1 }
        return updates.all[start].windows
    }

    /// Whether the watcher let go of its connection (disconnected, proxies destroyed).
    func isReleased() async -> Bool {
        let key = key
        return (try? await loop.submit { context in
            guard let watcher = context[local: key] else { return false }
            return !watcher.isConnected
        }) ?? false
    }

    /// Calls the watcher's `stop()`, on its loop, which keeps running.
    func stopWatcher() async throws {
        let key = key
        try await loop.submit { context in context[local: key]?.stop() }
    }

    func stop() {
        let key = key
        try? loop.execute { context in
            context[local: key]?.stop()
            context[local: key] = nil
        }
        loop.syncShutdown()
    }
}
