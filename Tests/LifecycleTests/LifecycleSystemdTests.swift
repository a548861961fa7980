import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `notifybusd --freeze-background` against a real systemd user manager (systemd 252, Debian's:
/// `SystemdUserManager`), on the manager's own session bus, with apps started in app scopes as
/// launchers start them (`systemd-run --user --scope --unit=app-…`): frozen and thawed through
/// `FreezeUnit`/`ThawUnit`, systemd's `FreezerState` agreeing with `cgroup.events` throughout.
@Suite(.serialized, .enabled(if: SwayBedEnvironment.testsRun && SystemdBedEnvironment.testsRun))
struct LifecycleSystemdTests {
    /// What systemd says of `scope`'s unit and what the kernel says of its cgroup agree: `frozen`
    /// and `frozen 1`, or `running` and `frozen 0`; returns the state.
    static func agreed(_ bed: LifecycleBed<HeadlessSway>, _ scope: AppScopes.Scope) async throws -> SystemdUserManager.FreezerState? {
        let manager = try #require(bed.manager)
        let state = try await manager.freezerState(of: scope.name)
        let frozen = scope.isFrozen
        #expect((state == .frozen && frozen) || (state == .running && !frozen), "FreezerState \(state.rawValue), cgroup.events frozen \(frozen)")
        return state
    }

    /// The bed with the manager: A and B in scopes the manager made, B focused, the daemon
    /// started with `arguments`, A frozen through `FreezeUnit`.
    static func frozenThroughTheManager(_ arguments: [String]) async throws -> (LifecycleBed<HeadlessSway>, WatcherLog, AppScopes.Scope) {
        let bed = try await LifecycleBed(manager: true)
        do {
            let (_, scopeA) = try await bed.open("org.example.A")
            try await bed.open("org.example.B")
            #expect(try await agreed(bed, scopeA) == .running)
            try await bed.start(arguments)
            let log = WatcherLog(bed)
            #expect(log.waitFor("org.example.A", "frozen", fromStart: true))
            #expect(try await agreed(bed, scopeA) == .frozen)
            #expect(bed.listed == [scopeA.group])
            return (bed, log, scopeA)
        } catch {
            bed.stop()
            throw error
        }
    }

    @Test func appScopesOfTheManagerAreFrozenAndThawedThroughIt() async throws {
        let (bed, log, scopeA) = try await Self.frozenThroughTheManager(["--freeze-delay", "2"])
        defer { bed.stop() }
        let focused = ContinuousClock.now
        try await bed.sway.focus(appID: "org.example.A")
        #expect(await eventually(timeout: .seconds(2)) { !scopeA.isFrozen })
        #expect(ContinuousClock.now - focused < .milliseconds(500), "thawed \(ContinuousClock.now - focused) after the focus")
        #expect(log.waitFor("org.example.A", "foreground"))
        #expect(await eventually(timeout: .seconds(2)) { (try? await Self.agreed(bed, scopeA)) == .running })
        #expect(bed.listed.isEmpty)
        // Frozen again, then the daemon stops: it thaws through the manager's view too.
        try await bed.sway.focus(appID: "org.example.B")
        #expect(log.waitFor("org.example.A", "frozen"))
        #expect(try await Self.agreed(bed, scopeA) == .frozen)
        #expect(bed.stopDaemon() == 0)
        #expect(!scopeA.isFrozen)
        #expect(await eventually(timeout: .seconds(2)) { (try? await Self.agreed(bed, scopeA)) == .running })
    }

    @Test func theManagerThawingAFrozenAppWakesItAndItIsFrozenAgainAfterTheGrace() async throws {
        let (bed, log, scopeA) = try await Self.frozenThroughTheManager(["--freeze-delay", "2", "--freeze-wake-grace", "2"])
        defer { bed.stop() }
        let manager = try #require(bed.manager)
        // systemctl --user thaw: ThawUnit, as systemd does around sleep. The refreeze is timed from
        // before the call (the daemon may see the thaw before systemctl exits), the notice from
        // its return.
        let thawed = ContinuousClock.now
        _ = try await manager.systemctl(["thaw", scopeA.name])
        let returned = ContinuousClock.now
        #expect(log.waitFor("org.example.A", "background", reason: "woken"))
        #expect(ContinuousClock.now - returned < .milliseconds(500))
        #expect(try await Self.agreed(bed, scopeA) == .running)
        #expect(bed.listed.isEmpty)
        #expect(log.waitFor("org.example.A", "frozen", timeout: .seconds(6)))
        let refrozen = ContinuousClock.now - thawed
        #expect(refrozen >= .seconds(2) && refrozen < .seconds(4), "frozen again \(refrozen) after the thaw")
        #expect(try await Self.agreed(bed, scopeA) == .frozen)
        #expect(bed.listed == [scopeA.group])
    }
}
