import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The rules of the article Freezing background apps that depend on where the windows come
/// from, each run on every compositor: a headless sway (sway's IPC, and the wlr protocol), a
/// headless phoc 0.24 (the wlr protocol, apps switched with `activate(seat)` as Phosh's overview
/// does) and a headless KWin 5.27 (KDE's protocol, and `auto`), with the real notifybusd.
@Suite(.serialized, .enabled(if: SwayBedEnvironment.testsRun)) struct LifecycleCompositorTests {
    static let delay = Duration.seconds(2)
    /// How late a freeze may come past its delay: 1 s by the rules, and what reading it takes.
    static let lateness = Duration.milliseconds(1500)

    /// A compositor and the backend notifybusd is started with there.
    struct Setup: Sendable, CustomTestStringConvertible {
        var compositor: TestedCompositor
        var backend: String
        var testDescription: String { "\(compositor) (\(backend))" }

        /// Every compositor with its own backend, sway with wlr too, KWin with auto too.
        static let all: [Setup] = [
            Setup(compositor: .sway, backend: "sway"), Setup(compositor: .sway, backend: "wlr"),
            Setup(compositor: .phoc, backend: "wlr"), Setup(compositor: .kwin, backend: "kde"),
            Setup(compositor: .kwin, backend: "auto"),
        ].filter(\.compositor.testsRun)
    }

    /// A bed on `compositor` with A's and then B's window (B in front), under a daemon freezing
    /// after 2 s; A's scope and the daemon's log.
    private static func twoAppsWithB(on compositor: TestedCompositor) async throws -> (any CompositorBed, AppScopes.Scope, WatcherLog) {
        let bed = try await compositor.bed()
        do {
            let scopeA = try await bed.openWindow("org.example.A", in: nil)
            try await bed.openWindow("org.example.B", in: nil)
            try await bed.startDaemon(["--freeze-delay", "2"], backend: nil)
            return (bed, scopeA, WatcherLog(bed))
        } catch {
            bed.stop()
            throw error
        }
    }

    @Test(arguments: Setup.all)
    func aBackgroundAppIsFrozenAfterTheDelayAndThawedAtOnceWhenFocused(_ setup: Setup) async throws {
        let bed = try await setup.compositor.bed()
        defer { bed.stop() }
        let scopeA = try await bed.openWindow("org.example.A", in: nil)
        let scopeB = try await bed.openWindow("org.example.B", in: nil)
        try await bed.startDaemon(["--freeze-delay", "2"], backend: setup.backend)
        let log = WatcherLog(bed)
        #expect(log.read { lines in lines.contains { isSource($0, "running") } }, "\(readFile(bed.daemon?.log ?? "") ?? "")")
        #expect(log.waitFor("org.example.B", "foreground", fromStart: true))
        let background = ContinuousClock.now
        #expect(log.waitFor("org.example.A", "frozen", fromStart: true), "\(readFile(bed.daemon?.log ?? "") ?? "")")
        // Frozen at most 1 s after the delay (2 s from A's background, before the daemon started).
        #expect(ContinuousClock.now - background < Self.delay + Self.lateness)
        #expect(scopeA.isFrozen && !scopeB.isFrozen)
        #expect(bed.listed == [scopeA.group])

        let focus = ContinuousClock.now
        try await bed.focus("org.example.A")
        #expect(await eventually(timeout: .seconds(2)) { !scopeA.isFrozen })
        let thawedAfter = ContinuousClock.now - focus
        #expect(thawedAfter < .milliseconds(500), "thawed after \(thawedAfter)")
        #expect(log.waitFor("org.example.A", "foreground"))
        #expect(bed.listed.isEmpty)
        // B is in the background now, and frozen in its turn; notifybusd stopped thaws it.
        #expect(log.waitFor("org.example.B", "frozen"))
        #expect(scopeB.isFrozen)
        #expect(bed.stopDaemon(SIGTERM) == 0)
        #expect(!scopeB.isFrozen)
        #expect(bed.listed.isEmpty)
    }

    @Test(arguments: TestedCompositor.running)
    func aReturnToTheForegroundRestartsTheCount(_ compositor: TestedCompositor) async throws {
        let (bed, scopeA, log) = try await Self.twoAppsWithB(on: compositor)
        defer { bed.stop() }
        #expect(log.waitFor("org.example.A", "background", reason: .some(nil), fromStart: true))
        #expect(log.waitFor("org.example.B", "foreground", fromStart: true))
        // 1.5 s in the background, of the 2 s: then in front again, and back.
        try await Task.sleep(for: .milliseconds(1500))
        #expect(!scopeA.isFrozen)
        try await bed.focus("org.example.A")
        #expect(log.waitFor("org.example.A", "foreground"))
        let background = ContinuousClock.now
        try await bed.focus("org.example.B")
        #expect(await eventually(timeout: .seconds(6)) { scopeA.isFrozen })
        let frozenAfter = ContinuousClock.now - background
        #expect(frozenAfter >= Self.delay, "frozen \(frozenAfter) after its last background")
        #expect(frozenAfter < Self.delay + Self.lateness, "frozen \(frozenAfter) after its last background")
        #expect(log.waitFor("org.example.A", "frozen"))
        #expect(log.states(of: "org.example.A") == ["background", "foreground", "background", "frozen"])
        #expect(log.hasNoRepeats)
        #expect(bed.listed == [scopeA.group])
    }

    @Test(arguments: TestedCompositor.running)
    func aScopeHoldingTheCompositorIsNeverFrozen(_ compositor: TestedCompositor) async throws {
        let bed = try await compositor.bed()
        defer { bed.stop() }
        let scopeS = try await bed.openWindow("org.example.S", in: nil)
        // The compositor itself moves into S's scope (it stays there until the tree is removed).
        try writeFile(scopeS.directory + "/cgroup.procs", String(bed.compositorPID))
        let scopeX = try await bed.openWindow("org.example.X", in: nil)
        try await bed.openWindow("org.example.B", in: nil)
        try await bed.startDaemon(["--freeze-delay", "2"], backend: nil)
        let log = WatcherLog(bed)
        #expect(log.waitFor("org.example.S", "background", reason: "protected", fromStart: true), "\(log.lines)")
        #expect(log.waitFor("org.example.X", "frozen", fromStart: true))
        #expect(!scopeS.isFrozen)
        #expect(bed.listed == [scopeX.group])
        #expect(!log.states(of: "org.example.S").contains("frozen"))
    }

    @Test(arguments: TestedCompositor.running)
    func aKilledCompositorThawsEverythingAndClosesEveryApp(_ compositor: TestedCompositor) async throws {
        let bed = try await compositor.bed()
        defer { bed.stop() }
        let scopeA = try await bed.openWindow("org.example.A", in: nil)
        let scopeC = try await bed.openWindow("org.example.C", in: nil)
        try await bed.openWindow("org.example.B", in: nil)
        try await bed.startDaemon(["--freeze-delay", "2"], backend: nil)
        let log = WatcherLog(bed)
        #expect(log.read { lines in lines.contains { isSource($0, "running") } })
        #expect(log.read { lines in
            ["org.example.A", "org.example.C"].allSatisfy { app in lines.contains { isLifecycle($0, app, "frozen") } }
        })
        #expect(Set(bed.listed) == [scopeA.group, scopeC.group])

        let killed = ContinuousClock.now
        kill(bed.compositorPID, SIGKILL)
        #expect(await eventually(timeout: .seconds(3)) { !scopeA.isFrozen && !scopeC.isFrozen })
        let thawedAfter = ContinuousClock.now - killed
        #expect(thawedAfter < .seconds(1), "thawed \(thawedAfter) after \(compositor) was killed")
        #expect(freezeBit(scopeA.directory) == "0" && freezeBit(scopeC.directory) == "0")
        let mark = log.lines.count
        let apps = ["org.example.A", "org.example.B", "org.example.C"]
        #expect(log.read { lines in
            let since = lines[mark...]
            return apps.allSatisfy { app in since.contains { isLifecycle($0, app, "closed") } }
                && since.contains { isSource($0, "unavailable") }
        }, "\(log.lines[mark...])")
        let source = log.lines[mark...].first { isSource($0, "unavailable") }
        #expect(source?["reason"]?.stringValue?.contains("lost") == true, "\(String(describing: source))")
        for app in apps { #expect(log.states(of: app).filter { $0 == "closed" }.count == 1, "\(app)") }
        #expect(bed.listed.isEmpty)
    }

    @Test(arguments: TestedCompositor.running)
    func closingTheLastWindowOfAFrozenAppThawsItsScope(_ compositor: TestedCompositor) async throws {
        let (bed, scopeA, log) = try await Self.twoAppsWithB(on: compositor)
        defer { bed.stop() }
        #expect(log.waitFor("org.example.A", "frozen", fromStart: true))
        #expect(freezeBit(scopeA.directory) == "1")
        try await bed.close("org.example.A")
        let closed = ContinuousClock.now
        #expect(await eventually(timeout: .seconds(2)) { freezeBit(scopeA.directory) == "0" })
        let thawedAfter = ContinuousClock.now - closed
        #expect(thawedAfter < .milliseconds(500), "thawed \(thawedAfter) after the compositor no longer listed the window")
        #expect(log.waitFor("org.example.A", "closed"))
        #expect(bed.listed.isEmpty)
        // Something later on the watcher: a new window, in front.
        try await bed.openWindow("org.example.C", in: nil)
        #expect(log.waitFor("org.example.C", "foreground", fromStart: true))
        #expect(log.states(of: "org.example.A") == ["background", "frozen", "closed"])
        #expect(log.hasNoRepeats)
    }
}
