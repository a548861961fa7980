import EpollLoop
@testable import NotifyBusLifecycle
import TestSupport
import Testing
import Wayland

#if canImport(Glibc)
import Glibc
#endif

/// Where the tests on a headless KWin run: in CI always (and fail there when the bed cannot be
/// made), elsewhere where KWin and GTK are installed.
enum KWinBedEnvironment {
    static var testsRun: Bool { getenv("CI") != nil || HeadlessKWin.isInstalled }
    /// With app scopes too (root and a writable cgroup2 mount), for notifybusd's tests.
    static var daemonTestsRun: Bool { getenv("CI") != nil || (HeadlessKWin.isInstalled && SwayBedEnvironment.mount != nil) }
}

/// The kde window backend against a real headless KWin 5.27 (`HeadlessKWin`) with real GTK
/// windows, KWin trusting this test process with `org_kde_plasma_window_management` through a
/// desktop file naming its executable.
@Suite(.serialized, .enabled(if: KWinBedEnvironment.testsRun)) struct KdeToplevelWatcherTests {
    /// KWin answers the registry of a client it trusts only after hashing its executable twice:
    /// this test bundle, 80 MB or so, takes it 1.5 to 2.5 s here.
    private let registryTimeout = Duration.seconds(20)

    /// A headless KWin trusting this test process, with windows of `appIDs` opened in that order.
    private func kwin(withWindows appIDs: [String]) async throws -> HeadlessKWin {
        let kwin = try await HeadlessKWin(trusting: [Paths.testExecutable])
        do {
            for appID in appIDs { try await kwin.openWindow(appID: appID) }
            return kwin
        } catch {
            kwin.stop()
            throw error
        }
    }

    @Test func theFirstListHasEveryWindowWithItsProcessAndTheFocusedOneActive() async throws {
        let kwin = try await kwin(withWindows: [])
        defer { kwin.stop() }
        let a = try await kwin.openWindow(appID: "org.example.A")
        let b = try await kwin.openWindow(appID: "org.example.B")
        try await kwin.focus(appID: "org.example.A")

        let watch = try await KdeWatcherRun(display: kwin.displayPath, registryTimeout: registryTimeout)
        defer { watch.stop() }
        let first = try #require(await watch.nextWindows())
        #expect(first.compactMap(\.appID).sorted() == ["org.example.A", "org.example.B"])
        #expect(first.filter(\.activated).map(\.appID) == ["org.example.A"])
        #expect(first.first { $0.appID == "org.example.A" }?.pid == a.pid)
        #expect(first.first { $0.appID == "org.example.B" }?.pid == b.pid)
        #expect(Set(first.map(\.id)).count == 2)
        #expect(watch.updates.all.count == 1, "one report for the first list")
        #expect(watch.compositorPID == kwin.pid)
    }

    @Test func aFocusChangeArrivesWithin100MillisecondsOfTheScriptsRun() async throws {
        let kwin = try await kwin(withWindows: ["org.example.A", "org.example.B"])
        defer { kwin.stop() }

        let watch = try await KdeWatcherRun(display: kwin.displayPath, registryTimeout: registryTimeout)
        defer { watch.stop() }
        #expect(try #require(await watch.nextWindows()).first(where: \.activated)?.appID == "org.example.B")

        for (target, other) in [("org.example.A", "org.example.B"), ("org.example.B", "org.example.A"), ("org.example.A", "org.example.B")] {
            let sent = ContinuousClock.now
            try await kwin.focus(appID: target)
            let returned = ContinuousClock.now
            let isTheChange = { (stamped: StampedUpdate) in
                stamped.at >= sent && stamped.windows?.first(where: \.activated)?.appID == target
            }
            #expect(await watch.updates.wait(timeout: patience) { $0.contains(where: isTheChange) }, "\(target) activated")
            let update = try #require(watch.updates.all.first(where: isTheChange))
            // From the return of the script's run (KWin activates within it), and from the start
            // of the three D-Bus calls that load, run and unload the script.
            let latency = returned.duration(to: update.at)
            #expect(latency <= .milliseconds(100), "focus reported \(latency) after the script ran")
            let windows = try #require(update.windows)
            #expect(windows.filter(\.activated).count == 1)
            #expect(windows.contains { $0.appID == other && !$0.activated })
            #expect(sent.duration(to: update.at) < .seconds(1))
        }
    }

    @Test func aWindowThatClosesLeavesTheListAndANewOneGetsANewID() async throws {
        let kwin = try await kwin(withWindows: ["org.example.A", "org.example.B"])
        defer { kwin.stop() }

        let watch = try await KdeWatcherRun(display: kwin.displayPath, registryTimeout: registryTimeout)
        defer { watch.stop() }
        let first = try #require(await watch.nextWindows())
        #expect(first.count == 2)
        let idOfB = try #require(first.first { $0.appID == "org.example.B" }?.id)

        try await kwin.close(appID: "org.example.B")
        let closed = await watch.updates.wait { updates in
            updates.last?.windows.map { $0.map(\.appID) == ["org.example.A"] } ?? false
        }
        #expect(closed, "\(watch.updates.all.map(\.update))")
        #expect(watch.updates.all.last?.windows?.contains { $0.id == idOfB } == false)

        let c = try await kwin.openWindow(appID: "org.example.C")
        let opened = await watch.updates.wait { updates in
            updates.last?.windows?.contains { $0.appID == "org.example.C" } ?? false
        }
        #expect(opened, "\(watch.updates.all.map(\.update))")
        let windowC = try #require(watch.updates.all.last?.windows?.first { $0.appID == "org.example.C" })
        #expect(!first.map(\.id).contains(windowC.id))
        #expect(windowC.pid == c.pid)
        #expect(windowC.activated, "a new window takes the focus")
    }

    @Test func aCompositorThatDiesIsReportedLostExactlyOnce() async throws {
        let kwin = try await kwin(withWindows: ["org.example.A"])
        defer { kwin.stop() }

        let watch = try await KdeWatcherRun(display: kwin.displayPath, registryTimeout: registryTimeout)
        defer { watch.stop() }
        #expect(try #require(await watch.nextWindows()).count == 1)

        kill(kwin.pid, SIGKILL)
        #expect(await watch.updates.wait { $0.contains { $0.lostReason != nil } })
        try await Task.sleep(for: .milliseconds(300))
        let all = watch.updates.all
        #expect(all.filter { $0.lostReason != nil }.count == 1)
        #expect(all.last?.lostReason != nil)
        #expect(await watch.isReleased())
    }

    @Test func nothingIsReportedAfterStop() async throws {
        let kwin = try await kwin(withWindows: ["org.example.A"])
        defer { kwin.stop() }

        let watch = try await KdeWatcherRun(display: kwin.displayPath, registryTimeout: registryTimeout)
        #expect(try #require(await watch.nextWindows()).count == 1)
        try await watch.stopWatcher()
        let count = watch.updates.all.count
        try await kwin.openWindow(appID: "org.example.B")
        try await kwin.focus(appID: "org.example.A")
        kill(kwin.pid, SIGKILL)
        try await Task.sleep(for: .milliseconds(300))
        #expect(watch.updates.all.count == count)
        watch.stop()
    }

    @Test func anIdleWatcherLeavesItsLoopAsleep() async throws {
        let kwin = try await kwin(withWindows: ["org.example.A"])
        defer { kwin.stop() }
        let watch = try await KdeWatcherRun(display: kwin.displayPath, registryTimeout: registryTimeout)
        defer { watch.stop() }
        #expect(try #require(await watch.nextWindows()).count == 1)

        let thread = try #require(threadID(named: watch.loop.name))
        try await Task.sleep(for: .milliseconds(100))
        let before = try #require(contextSwitches(ofThread: thread))
        try await Task.sleep(for: .milliseconds(700))
        let after = try #require(contextSwitches(ofThread: thread))
        #expect(after == before, "the loop thread woke \(after - before) times while nothing happened")
    }

    /// A window KWin keeps off the task bar (as it does panels, the desktop, notifications) is
    /// not listed while it is; back on the task bar, it is listed again, under the same id.
    @Test func aWindowOffTheTaskBarIsNotListed() async throws {
        let kwin = try await kwin(withWindows: ["org.example.A", "org.example.Panel"])
        defer { kwin.stop() }
        let watch = try await KdeWatcherRun(display: kwin.displayPath, registryTimeout: registryTimeout)
        defer { watch.stop() }
        let first = try #require(await watch.nextWindows())
        let panel = try #require(first.first { $0.appID == "org.example.Panel" })

        try await kwin.setSkipsTaskbar(appID: "org.example.Panel", true)
        #expect(await watch.updates.wait { $0.last?.windows?.map(\.appID) == ["org.example.A"] }, "\(watch.updates.all.map(\.update))")
        try await kwin.setSkipsTaskbar(appID: "org.example.Panel", false)
        #expect(await watch.updates.wait { $0.last?.windows?.contains { $0.id == panel.id } == true }, "\(watch.updates.all.map(\.update))")
    }

    /// KWin's permission: without a desktop file naming this process's executable, the registry
    /// lacks the global, and the watcher says the protocol is not offered.
    @Test func aProcessKWinDoesNotTrustIsNotOfferedTheProtocol() async throws {
        let kwin = try await HeadlessKWin(trusting: [])
        defer { kwin.stop() }
        try await kwin.openWindow(appID: "org.example.A")
        let outcome = try await KdeWatcherRun.connectionError(display: kwin.displayPath)
        #expect(outcome == .protocolNotOffered("org_kde_plasma_window_management"))
        #expect(outcome?.description == "the compositor does not offer org_kde_plasma_window_management")
    }
}
