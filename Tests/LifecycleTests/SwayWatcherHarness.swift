import EpollLoop
import NotifyBusLifecycle
import Synchronization
import TestSupport

/// A `SwayToplevelWatcher` on a loop thread of its own, every update recorded with the time it came.
final class SwayWatcherHarness: Sendable {
    /// An update and when it came.
    struct Received: Sendable {
        var time: ContinuousClock.Instant
        var update: ToplevelUpdate
    }

    let loop: EventLoopThread
    let received = Recorder<Received>()
    let compositorPID: Int32?
    private let key = LoopLocalKey<SwayToplevelWatcher>()

    /// Starts a loop and the watcher on it, connected to `socketPath`.
    /// - Throws: the watcher's `SwayIPCError`.
    init(socketPath: String?) async throws {
        loop = try EventLoopThread(name: "sway-watcher")
        let received = self.received
        let key = self.key
        let outcome: Result<Int32?, SwayIPCError> = try await loop.submit { context in
            do throws(SwayIPCError) {
                let watcher = try SwayToplevelWatcher(context: context, socketPath: socketPath) { update in
                    received.append(Received(time: .now, update: update))
                }
                context[local: key] = watcher
                return .success(watcher.compositorPID)
            } catch {
                return .failure(error)
            }
        }
        do {
            compositorPID = try outcome.get()
        } catch {
            await loop.shutdown()
            throw error
        }
    }

    /// Every update so far.
    var updates: [ToplevelUpdate] { received.all.map(\.update) }

    /// The `.lost` reasons so far.
    var lostReasons: [String] {
        updates.compactMap { if case .lost(let reason) = $0 { reason } else { nil } }
    }

    /// Waits for a `.windows` update satisfying `predicate`, among the updates after the first
    /// `skipped`; returns it and when it came.
    func windows(
        after skipped: Int = 0, timeout: Duration = patience, where predicate: @escaping ([ToplevelWindow]) -> Bool
    ) async -> (windows: [ToplevelWindow], time: ContinuousClock.Instant)? {
        func match(_ all: [Received]) -> (windows: [ToplevelWindow], time: ContinuousClock.Instant)? {
            for item in all.dropFirst(skipped) {
                if case .windows(let windows) = item.update, predicate(windows) { return (windows, item.time) }
            }
            return nil
        }
        await received.wait(timeout: timeout) { match($0) != nil }
        return match(received.all)
    }

    /// Waits for a `.lost` update; returns its reason.
    func lost(timeout: Duration = patience) async -> String? {
        await received.wait(timeout: timeout) { _ in !lostReasons.isEmpty }
        return lostReasons.first
    }

    /// Stops the watcher (on its loop) and waits until that is done.
    func stopWatcher() async throws {
        let key = self.key
        try await loop.submit { context in context[local: key]?.stop() }
    }

    /// Shuts the loop down, dropping the watcher.
    func shutdown() async { await loop.shutdown() }
}

extension [ToplevelWindow] {
    /// The app ids of the activated windows.
    var activatedAppIDs: [String?] { filter(\.activated).map(\.appID) }

    /// The window of `appID`.
    func window(_ appID: String) -> ToplevelWindow? { first { $0.appID == appID } }
}
