import EpollLoop
@testable import NotifyBusLifecycle
import Synchronization
import TestSupport
import Testing
import Wayland

#if canImport(Glibc)
import Glibc
#endif

/// Whether the tests run: in CI always, elsewhere as root (sway runs as `nobody`) with sway and
/// foot installed.
private var wlrTestsRun: Bool { getenv("CI") != nil || (geteuid() == 0 && SwayBedEnvironment.hasSway) }

/// The wlr window backend against a real headless sway (wlroots' foreign-toplevel manager,
/// version 3) with real foot windows (`HeadlessSway`).
@Suite(.serialized, .enabled(if: wlrTestsRun)) struct WlrToplevelWatcherTests {
    /// A headless sway with foot windows of `appIDs`, opened in that order, then `focus` focused.
    private static func sway(withWindows appIDs: [String], focus: String? = nil) async throws -> HeadlessSway {
        let sway = try await HeadlessSway()
        do {
            for appID in appIDs { try await sway.openWindow(appID: appID) }
            if let focus { try await sway.focus(appID: focus) }
            return sway
        } catch {
            sway.stop()
            throw error
        }
    }

    @Test func theFirstListHasEveryWindowAndTheFocusedOneActivated() async throws {
        let sway = try await Self.sway(withWindows: ["org.example.A", "org.example.B"], focus: "org.example.A")
        defer { sway.stop() }

        let watch = try await WlrWatcherRun(display: sway.displayPath)
        defer { watch.stop() }
        let first = try #require(await watch.nextWindows())
        #expect(first.compactMap(\.appID).sorted() == ["org.example.A", "org.example.B"])
        #expect(first.filter(\.activated).map(\.appID) == ["org.example.A"])
        #expect(first.allSatisfy { $0.pid == nil })
        #expect(Set(first.map(\.id)).count == 2)
        #expect(watch.updates.all.count == 1, "one report for the first list")
    }

    @Test func aFocusChangeArrivesWithin100MillisecondsOfSwaymsg() async throws {
        let sway = try await HeadlessSway()
        defer { sway.stop() }
        let a = try await sway.openWindow(appID: "org.example.A")
        let b = try await sway.openWindow(appID: "org.example.B")
        try await sway.focus(appID: "org.example.A")

        let watch = try await WlrWatcherRun(display: sway.displayPath)
        defer { watch.stop() }
        let first = try #require(await watch.nextWindows())
        #expect(first.first(where: \.activated)?.appID == "org.example.A")

        for (target, other) in [(b, "org.example.A"), (a, "org.example.B"), (b, "org.example.A")] {
            // From the moment swaymsg is started (container ids known beforehand).
            let sent = ContinuousClock.now
            try await sway.command("[con_id=\(target.id)] focus")
            let isTheChange = { (stamped: StampedUpdate) in
                stamped.at >= sent && stamped.windows?.first(where: \.activated)?.appID == target.appID
            }
            #expect(await watch.updates.wait(timeout: patience) { $0.contains(where: isTheChange) }, "\(target.appID) activated")
            let update = try #require(watch.updates.all.first(where: isTheChange))
            let latency = sent.duration(to: update.at)
            #expect(latency <= .milliseconds(100), "focus reported \(latency) after swaymsg started")
            let windows = try #require(update.windows)
            #expect(windows.filter(\.activated).count == 1)
            #expect(windows.contains { $0.appID == other && !$0.activated })
        }
    }

    @Test func aWindowThatClosesLeavesTheListAndANewOneGetsANewID() async throws {
        let sway = try await Self.sway(withWindows: ["org.example.A", "org.example.B"])
        defer { sway.stop() }

        let watch = try await WlrWatcherRun(display: sway.displayPath)
        defer { watch.stop() }
        let first = try #require(await watch.nextWindows())
        #expect(first.count == 2)
        let idOfB = try #require(first.first { $0.appID == "org.example.B" }?.id)

        try await sway.close(appID: "org.example.B")
        let closed = await watch.updates.wait { updates in
            updates.last?.windows.map { $0.map(\.appID) == ["org.example.A"] } ?? false
        }
        #expect(closed, "\(watch.updates.all.map(\.update))")
        #expect(watch.updates.all.last?.windows?.contains { $0.id == idOfB } == false)

        try await sway.openWindow(appID: "org.example.C")
        let opened = await watch.updates.wait { updates in
            updates.last?.windows?.contains { $0.appID == "org.example.C" } ?? false
        }
        #expect(opened, "\(watch.updates.all.map(\.update))")
        let idOfC = try #require(watch.updates.all.last?.windows?.first { $0.appID == "org.example.C" }?.id)
        #expect(!first.map(\.id).contains(idOfC))
    }

    @Test func aWindowMovedToTheScratchpadIsNoLongerActivated() async throws {
        let sway = try await Self.sway(withWindows: ["org.example.A", "org.example.B"], focus: "org.example.A")
        defer { sway.stop() }

        let watch = try await WlrWatcherRun(display: sway.displayPath)
        defer { watch.stop() }
        #expect(try #require(await watch.nextWindows()).first(where: \.activated)?.appID == "org.example.A")

        try await sway.hide(appID: "org.example.A")
        let hidden = await watch.updates.wait { updates in
            updates.last?.windows?.contains { $0.appID == "org.example.A" && !$0.activated } ?? false
        }
        #expect(hidden, "\(watch.updates.all.map(\.update))")
        #expect(watch.updates.all.last?.windows?.count == 2, "a hidden window is still open")
    }

    @Test func aCompositorThatDiesIsReportedLostExactlyOnce() async throws {
        let sway = try await Self.sway(withWindows: ["org.example.A"])
        defer { sway.stop() }

        let watch = try await WlrWatcherRun(display: sway.displayPath)
        defer { watch.stop() }
        #expect(try #require(await watch.nextWindows()).count == 1)

        kill(sway.pid, SIGKILL)
        #expect(await watch.updates.wait { $0.contains { $0.lostReason != nil } })
        // Nothing after it, however long the loop runs.
        try await Task.sleep(for: .milliseconds(300))
        let all = watch.updates.all
        #expect(all.filter { $0.lostReason != nil }.count == 1)
        #expect(all.last?.lostReason != nil)
        #expect(await watch.isReleased())
    }

    @Test func nothingIsReportedAfterStop() async throws {
        let sway = try await Self.sway(withWindows: ["org.example.A"])
        defer { sway.stop() }

        let watch = try await WlrWatcherRun(display: sway.displayPath)
        #expect(try #require(await watch.nextWindows()).count == 1)
        try await watch.stopWatcher()
        let count = watch.updates.all.count
        try await sway.openWindow(appID: "org.example.B")
        try await sway.focus(appID: "org.example.A")
        kill(sway.pid, SIGKILL)
        try await Task.sleep(for: .milliseconds(300))
        #expect(watch.updates.all.count == count)
        watch.stop()
    }

    @Test func anIdleWatcherLeavesItsLoopAsleep() async throws {
        let sway = try await Self.sway(withWindows: ["org.example.A"])
        defer { sway.stop() }
        let watch = try await WlrWatcherRun(display: sway.displayPath)
        defer { watch.stop() }
        #expect(try #require(await watch.nextWindows()).count == 1)

        let thread = try #require(threadID(named: watch.loop.name))
        try await Task.sleep(for: .milliseconds(100))
        let before = try #require(contextSwitches(ofThread: thread))
        try await Task.sleep(for: .milliseconds(700))
        let after = try #require(contextSwitches(ofThread: thread))
        #expect(after == before, "the loop thread woke \(after - before) times while nothing happened")
    }

    @Test func aCompositorThatDoesNotAnswerTimesOutTheRoundTrip() async throws {
        let sway = try await HeadlessSway()
        defer { sway.stop() }
        let loop = try EventLoopThread(name: "wlr-stopped")
        defer { loop.syncShutdown() }
        let display = sway.displayPath
        kill(sway.pid, SIGSTOP)
        let start = ContinuousClock.now
        let outcome = try await loop.submit { _ -> WaylandError? in
            do throws(WaylandError) {
                let connection = try WaylandDisplay(name: display)
                defer { connection.close() }
                try connection.roundtrip(timeout: .milliseconds(300))
                return nil
            } catch {
                return error
            }
        }
        let elapsed = start.duration(to: .now)
        kill(sway.pid, SIGCONT)
        #expect(outcome == .noAnswer(operation: "wl_display.sync", milliseconds: 300))
        #expect(elapsed < .seconds(2), "returned after \(elapsed)")

        // Running again, it answers the next connection.
        let watch = try await WlrWatcherRun(display: display)
        defer { watch.stop() }
        #expect(try #require(await watch.nextWindows()).isEmpty)
    }

    @Test func noCompositorSocketThrowsNoCompositor() async throws {
        let directory = try makeTemporaryDirectory("notifybus-wlr-none")
        defer { removeTree(directory) }
        let display = directory + "/wayland-9"
        let outcome = try await WlrWatcherRun.connectionError(display: display)
        guard case .noCompositor(let name, let code) = outcome else {
            Issue.record("expected .noCompositor, got \(String(describing: outcome))")
            return
        }
        #expect(name == display)
        #expect(code == ENOENT)
    }

    @Test func theCompositorPIDIsSways() async throws {
        let sway = try await HeadlessSway()
        defer { sway.stop() }
        let watch = try await WlrWatcherRun(display: sway.displayPath)
        defer { watch.stop() }
        #expect(watch.compositorPID == sway.pid)
        #expect(try #require(await watch.nextWindows()).isEmpty)
    }
}
