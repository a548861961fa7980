import EpollLoop
import Logging
@testable import NotifyBusDaemon
import SystemSupport
import TestSupport

/// A `ProcessLifeWatcher` on a loop of its own, and every change its handlers were told.
final class WatcherHarness: Sendable {
    /// One call of a follower's handler.
    struct Change: Sendable, Equatable, CustomStringConvertible {
        let pid: Int32
        let canRun: Bool
        var description: String { "\(pid): \(canRun ? "runs" : "cannot run")" }
    }

    struct Missing: Error {}

    let loop: EventLoopThread
    private let key = LoopLocalKey<ProcessLifeWatcher>()
    /// What the handlers were told, in order.
    let changes = Recorder<Change>()

    init(mounts: [CgroupMount], logger: Logger = Logger(label: "test.life"), pollInterval: Duration = .seconds(1)) throws {
        loop = try EventLoopThread(name: "life-test")
        try loop.execute { [key] context in
            context[local: key] = ProcessLifeWatcher(context: context, logger: logger, mounts: mounts, pollInterval: pollInterval)
        }
    }

    /// Runs `body` with the watcher on its loop.
    func withWatcher<Result: Sendable>(_ body: @escaping @Sendable (ProcessLifeWatcher) -> Result) async throws -> Result {
        let result: Result? = try await loop.submit { [key] context in context[local: key].map(body) }
        guard let result else { throw Missing() }
        return result
    }

    /// Follows the process that has the ID `pid` now (or, when there is none, a process of that
    /// ID that is not there), in its group, recording its changes.
    func follow(pid: Int32) async throws -> ProcessLifeWatcher.Token {
        let process = ProcessIdentity.current(pid: pid) ?? ProcessIdentity(pid: pid, startTime: 0)
        let group = ControlGroup.group(ofProcess: pid)
        return try await withWatcher { [changes] watcher in
            watcher.follow(process: process, group: group) { canRun in changes.append(Change(pid: pid, canRun: canRun)) }
        }
    }

    func unfollow(_ token: ProcessLifeWatcher.Token) async throws {
        try await withWatcher { $0.unfollow(token) }
    }

    func check(_ token: ProcessLifeWatcher.Token) async throws -> Bool {
        try await withWatcher { $0.check(token) }
    }

    func canRun(_ token: ProcessLifeWatcher.Token) async throws -> Bool {
        try await withWatcher { $0.canRun(token) }
    }

    var isPolling: Bool { get async throws { try await withWatcher { $0.isPolling } } }

    var watchedFiles: [String] { get async throws { try await withWatcher { $0.watchedFiles } } }

    /// The changes recorded for `pid`, in order.
    func changes(of pid: Int32) -> [Bool] { changes.all.filter { $0.pid == pid }.map(\.canRun) }

    /// Waits (up to `timeout`) until `pid`'s recorded changes are `expected`.
    @discardableResult
    func wait(for pid: Int32, toBe expected: [Bool], timeout: Duration = .seconds(3)) async -> Bool {
        await changes.wait(timeout: timeout) { all in all.filter { $0.pid == pid }.map(\.canRun) == expected }
    }

    func shutdown() async { await loop.shutdown() }
}
