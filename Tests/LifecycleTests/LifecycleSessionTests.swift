import DBus
import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `notifybusd --freeze-background` and what it follows on the session bus, played by
/// python-dbusmock: an MPRIS player that is playing, and the owner of a name that is never frozen.
/// (LifecycleSystemdTests has the real systemd user manager.)
@Suite(.serialized, .enabled(if: SwayBedEnvironment.testsRun)) struct LifecycleSessionTests {
    /// Moves `pid` into `scope`.
    static func move(_ pid: Int32, into scope: AppScopes.Scope) throws {
        try writeFile(scope.directory + "/cgroup.procs", "\(pid)\n")
    }

    /// The bed with org.example.A in the background and org.example.B focused, each in a scope
    /// of its own, and the daemon started with `delay`: the bed, A's scope, the session bus.
    static func twoApps(delay: Int) async throws -> (LifecycleBed<HeadlessSway>, AppScopes.Scope, PrivateBus) {
        let bed = try await LifecycleBed()
        do {
            let (_, scopeA) = try await bed.open("org.example.A")
            try await bed.open("org.example.B")
            try await bed.start(["--freeze-delay", "\(delay)"])
            let session = try #require(bed.daemon?.session)
            return (bed, scopeA, session)
        } catch {
            bed.stop()
            throw error
        }
    }

    @Test func aPlayingPlayerKeepsItsAppRunning() async throws {
        let (bed, scopeA, session) = try await Self.twoApps(delay: 2)
        defer { bed.stop() }
        let player = try await DBusMockProcess(
            bus: session, template: Paths.fixtures + "/mpris_player.py", name: "org.mpris.MediaPlayer2.examplea",
            parameters: #"{"PlaybackStatus": "Playing"}"#)
        defer { Task { try? await player.stop() } }
        try Self.move(player.pid, into: scopeA)
        // A window event makes the daemon read where the player is now.
        try await bed.sway.focus(appID: "org.example.A")
        try await bed.sway.focus(appID: "org.example.B")
        #expect(bed.waitFor("org.example.A", "background", reason: "media") != nil, "\(readFile(bed.daemon?.log ?? "") ?? "")")
        #expect(!scopeA.isFrozen)
        // Paused: the count starts again, and it is frozen the delay later.
        let client = try DBusClient(address: session.dbusAddress)
        try await client.waitUntilConnected()
        let paused = ContinuousClock.now
        _ = try await client.call(
            destination: "org.mpris.MediaPlayer2.examplea", path: "/org/mpris/MediaPlayer2",
            interface: "org.freedesktop.DBus.Properties", member: "Set",
            arguments: [.string("org.mpris.MediaPlayer2.Player"), .string("PlaybackStatus"), .variant(.string("Paused"))])
        #expect(bed.waitFor("org.example.A", "frozen") != nil)
        #expect(ContinuousClock.now - paused >= .seconds(2))
        #expect(scopeA.isFrozen)
    }

    @Test func theOwnerOfAProtectedNameIsNeverFrozen() async throws {
        let (bed, scopeA, session) = try await Self.twoApps(delay: 2)
        defer { bed.stop() }
        let notifications = try await DBusMockProcess(
            bus: session, name: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
            interface: "org.freedesktop.Notifications")
        defer { Task { try? await notifications.stop() } }
        try Self.move(notifications.pid, into: scopeA)
        try await bed.sway.focus(appID: "org.example.A")
        try await bed.sway.focus(appID: "org.example.B")
        #expect(bed.waitFor("org.example.A", "background", reason: "protected") != nil, "\(readFile(bed.daemon?.log ?? "") ?? "")")
        #expect(!scopeA.isFrozen)
        #expect(bed.listed.isEmpty)
    }
}
