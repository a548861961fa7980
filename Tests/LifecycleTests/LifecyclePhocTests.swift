import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What phoc, the phones' compositor, does that the others do not, with the real notifybusd on
/// the wlr protocol: Phosh's lock screen and app grid (a top-layer surface with exclusive keyboard
/// interactivity, under which phoc reports no toplevel activated), and phoc killed and started
/// again under the same socket name.
@Suite(.serialized, .enabled(if: TestedCompositor.phoc.testsRun)) struct LifecyclePhocTests {
    func bed() async throws -> LifecycleBed<HeadlessPhoc> {
        try await LifecycleBed(compositor: { try await HeadlessPhoc() }, backend: "wlr")
    }

    @Test func theLockScreenOrTheHomeScreenPutsEveryAppInTheBackground() async throws {
        let bed = try await bed()
        defer { bed.stop() }
        let (_, scopeA) = try await bed.open("org.example.A")
        let (_, scopeB) = try await bed.open("org.example.B")
        try await bed.start(["--freeze-delay", "2"])
        let log = WatcherLog(bed)
        #expect(log.waitFor("org.example.B", "foreground", fromStart: true))
        #expect(log.waitFor("org.example.A", "frozen", fromStart: true))
        // The overview (or the lock screen) comes up: no toplevel is activated, so B is in the
        // background too, and frozen after the delay.
        let covered = ContinuousClock.now
        try await bed.compositor.cover()
        #expect(log.waitFor("org.example.B", "background"))
        #expect(log.waitFor("org.example.B", "frozen", timeout: .seconds(6)))
        let frozenAfter = ContinuousClock.now - covered
        #expect(frozenAfter >= .seconds(2) && frozenAfter < .milliseconds(3500), "B frozen \(frozenAfter) after the cover")
        #expect(scopeA.isFrozen && scopeB.isFrozen)
        // Gone again: phoc gives the focus back to B, which is thawed at once.
        let activated = try await bed.compositor.uncover()
        #expect(activated == ["org.example.B"])
        #expect(log.waitFor("org.example.B", "foreground"))
        #expect(await eventually(timeout: .seconds(2)) { !scopeB.isFrozen })
        #expect(scopeA.isFrozen)
        #expect(log.hasNoRepeats)
    }

    @Test func phocKilledAndStartedAgainIsFollowedAgain() async throws {
        let bed = try await bed()
        defer { bed.stop() }
        let (_, scopeA) = try await bed.open("org.example.A")
        try await bed.open("org.example.B")
        try await bed.start(["--freeze-delay", "2"])
        let log = WatcherLog(bed)
        #expect(log.waitFor("org.example.A", "frozen", fromStart: true))
        let lost = ContinuousClock.now
        try await bed.compositor.restart()
        // Everything thawed and closed, then the new phoc (same socket) found within the retry.
        #expect(!scopeA.isFrozen)
        let mark = log.lines.count
        #expect(log.read(timeout: .seconds(10)) { lines in lines[mark...].contains { isSource($0, "running") } }, "\(log.lines[mark...])")
        let back = ContinuousClock.now - lost
        #expect(back < .seconds(4), "running again \(back) after phoc was killed")
        #expect(log.states(of: "org.example.A").last == "closed")
        let (_, scopeC) = try await bed.open("org.example.C")
        try await bed.open("org.example.D")
        #expect(log.waitFor("org.example.C", "frozen", fromStart: true))
        #expect(scopeC.isFrozen)
    }
}
