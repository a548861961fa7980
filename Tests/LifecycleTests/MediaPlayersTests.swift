import DBus
import EpollLoop
import Logging
import NotifyBusLifecycle
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `MediaPlayers` on a loop of its own with its own connection to a private session bus; what it
/// reports and logs is recorded.
final class RunningMediaPlayers: Sendable {
    let reports = Recorder<Set<Int32>>()
    let log = LogRecorder()
    private let running: ConnectedOnLoop<MediaPlayers>

    /// Made before the connection connects (it starts once connected), or, `onConnected`, on a
    /// connection registered on the bus already (it starts at once).
    init(bus: PrivateBus, timeout: Duration = .seconds(5), onConnected: Bool = false) async throws {
        let (reports, logger) = (reports, log.logger)
        running = try await ConnectedOnLoop(
            name: "media-players", bus: bus,
            configuration: .init(initialBackoff: .milliseconds(50), maximumBackoff: .milliseconds(200)), onConnected: onConnected
        ) { connection in
            MediaPlayers(connection: connection, logger: logger, timeout: timeout) { reports.append($0) }
        }
    }

    /// The set last reported (empty before any).
    var current: Set<Int32> { reports.all.last ?? [] }

    /// Waits until the set last reported is `expected`.
    func waitFor(_ expected: Set<Int32>, timeout: Duration = patience) async -> Bool {
        await reports.wait(timeout: timeout) { ($0.last ?? []) == expected }
    }

    /// The set as `MediaPlayers` holds it now, read on its loop.
    func playingProcesses() async throws -> Set<Int32> {
        try await running.read(\.playingProcesses) ?? []
    }

    /// The warnings logged.
    var warnings: [String] { log.recent }

    func stop() async { await running.stop() }
}

/// Sets `PlaybackStatus` of the player `name` (python-dbusmock's `Properties.Set` emits
/// `PropertiesChanged`).
func setPlaybackStatus(_ client: DBusClient, _ name: String, _ value: DBusValue) async throws {
    _ = try await client.call(
        destination: BusName(validating: name), path: "/org/mpris/MediaPlayer2", interface: "org.freedesktop.DBus.Properties",
        member: "Set", arguments: [.string("org.mpris.MediaPlayer2.Player"), .string("PlaybackStatus"), .variant(value)])
}

/// MediaPlayers against MPRIS players of python-dbusmock (`Fixtures/mpris_player.py`) on a
/// private session bus.
@Suite("MediaPlayers with python-dbusmock players", .serialized)
struct MediaPlayersTests {
    let bus: PrivateBus
    let client: DBusClient

    init() async throws {
        (bus, client) = try await PrivateBus.startedWithClient(.session)
    }

    func startPlayer(_ suffix: String = "test", status: String = #""Playing""#) async throws -> DBusMockProcess {
        try await DBusMockProcess(
            bus: bus, template: Paths.fixtures + "/mpris_player.py", name: "org.mpris.MediaPlayer2.\(suffix)",
            parameters: #"{"PlaybackStatus": \#(status)}"#)
    }

    @Test func aPlayingPlayerIsReportedAndPausedRemoved() async throws {
        let player = try await startPlayer()
        let stopped = try await startPlayer("stopped", status: #""Stopped""#)
        let players = try await RunningMediaPlayers(bus: bus)
        #expect(await players.waitFor([player.pid]))
        try await setPlaybackStatus(client, player.name, .string("Paused"))
        #expect(await players.waitFor([]))
        try await setPlaybackStatus(client, stopped.name, .string("Playing"))
        #expect(await players.waitFor([stopped.pid]))
        try await setPlaybackStatus(client, player.name, .string("Playing"))
        #expect(await players.waitFor([player.pid, stopped.pid]))
        #expect(try await players.playingProcesses() == [player.pid, stopped.pid])
        #expect(players.warnings.isEmpty)
        await players.stop()
        try await player.stop()
        try await stopped.stop()
    }

    @Test func onAConnectionRegisteredAlreadyItStartsAtOnce() async throws {
        let player = try await startPlayer()
        let players = try await RunningMediaPlayers(bus: bus, onConnected: true)
        #expect(await players.waitFor([player.pid]))
        let later = try await startPlayer("later")
        #expect(await players.waitFor([player.pid, later.pid]))
        await players.stop()
        try await player.stop()
        try await later.stop()
    }

    @Test func aPlayerThatAppearsLaterIsReportedAndRemovedWhenItLeaves() async throws {
        let players = try await RunningMediaPlayers(bus: bus)
        // Connected and following: the set is read from scratch (nothing playing).
        try await Task.sleep(for: .milliseconds(200))
        let player = try await startPlayer()
        #expect(await players.waitFor([player.pid]))
        try await player.stop()
        #expect(await players.waitFor([]))
        await players.stop()
    }

    @Test func aReleasedNameIsNoLongerPlaying() async throws {
        let player = try await startPlayer()
        let players = try await RunningMediaPlayers(bus: bus)
        #expect(await players.waitFor([player.pid]))
        // The player's connection stays; only its name goes.
        _ = try await client.call(
            destination: BusName(validating: player.owner), path: "/org/mpris/MediaPlayer2",
            interface: "org.freedesktop.DBus.Mock", member: "AddMethod",
            arguments: [.string(""), .string("Release"), .string(""), .string(""),
                        .string("self.bus_name.get_bus().release_name('\(player.name)')")])
        _ = try await client.call(
            destination: BusName(validating: player.owner), path: "/org/mpris/MediaPlayer2",
            interface: "org.mpris.MediaPlayer2", member: "Release")
        try await bus.waitForNoOwner(of: player.name)
        #expect(await players.waitFor([]))
        #expect(!player.process.hasExited)
        await players.stop()
        try? await player.stop()
    }

    @Test func aPlaybackStatusOfAWrongTypeIsNotPlayingAndLoggedOnce() async throws {
        let wrong = try await startPlayer("wrong", status: "7")
        let good = try await startPlayer()
        let players = try await RunningMediaPlayers(bus: bus)
        #expect(await players.waitFor([good.pid]))
        #expect(await eventually { players.warnings.contains { $0.contains("has type 'i'") } })
        try await setPlaybackStatus(client, wrong.name, .boolean(true))
        try await setPlaybackStatus(client, wrong.name, .strings(["Playing"]))
        // A change after them: once it is seen, the wrong ones were too.
        try await setPlaybackStatus(client, good.name, .string("Paused"))
        #expect(await players.waitFor([]))
        #expect(players.warnings.filter { $0.contains("PlaybackStatus") }.count == 1)
        try await setPlaybackStatus(client, wrong.name, .string("Playing"))
        #expect(await players.waitFor([wrong.pid]))
        await players.stop()
        try await wrong.stop()
        try await good.stop()
    }

    @Test func aPlayerThatNeverAnswersBlocksNothing() async throws {
        let hung = try await startPlayer("hung")
        hung.suspend()
        let player = try await startPlayer()
        let started = ContinuousClock.now
        let players = try await RunningMediaPlayers(bus: bus, timeout: .seconds(30))
        #expect(await players.waitFor([player.pid], timeout: .seconds(3)))
        // Far below the hung call's own timeout (30 s here, 5 s in the daemon), whatever the load.
        #expect(ContinuousClock.now - started < .seconds(3))
        // Still answered while the hung player's Get is outstanding.
        try await setPlaybackStatus(client, player.name, .string("Paused"))
        #expect(await players.waitFor([], timeout: .seconds(1)))
        // Once it goes on, its answer counts.
        hung.resume()
        #expect(await players.waitFor([hung.pid]))
        await players.stop()
        try await hung.stop()
        try await player.stop()
    }

    @Test func aConnectionWithHundredsOfPlayerNamesHidesNoPlayer() async throws {
        let before = try await startPlayer("before")
        let hostile = try await startPlayer("hostile", status: #""Playing""#)
        // The hostile player takes 300 more player names.
        _ = try await client.call(
            destination: BusName(validating: hostile.owner), path: "/org/mpris/MediaPlayer2",
            interface: "org.freedesktop.DBus.Mock", member: "AddMethod",
            arguments: [.string(""), .string("Grab"), .string(""), .string(""),
                        .string("for i in range(300):\n    self.bus_name.get_bus().request_name('org.mpris.MediaPlayer2.h%d' % i)")])
        _ = try await client.call(
            destination: BusName(validating: hostile.owner), path: "/org/mpris/MediaPlayer2",
            interface: "org.mpris.MediaPlayer2", member: "Grab")
        let players = try await RunningMediaPlayers(bus: bus)
        #expect(await players.waitFor([before.pid, hostile.pid]))
        let after = try await startPlayer("after")
        #expect(await players.waitFor([before.pid, hostile.pid, after.pid]))
        #expect(players.warnings.count == 1)
        #expect(players.warnings.allSatisfy { $0.contains("owns more than 8 player names") })
        try await hostile.stop()
        #expect(await players.waitFor([before.pid, after.pid]))
        await players.stop()
        try await before.stop()
        try await after.stop()
    }

    @Test func afterTheBusRestartsEverythingIsReadAgain() async throws {
        let player = try await startPlayer()
        let players = try await RunningMediaPlayers(bus: bus)
        #expect(await players.waitFor([player.pid]))
        bus.stop()
        // python-dbusmock ends with its bus.
        #expect(await player.process.exit(within: patience) != nil)
        try bus.start()
        #expect(await players.waitFor([]))
        let next = try await startPlayer()
        #expect(await players.waitFor([next.pid]))
        await players.stop()
        try await next.stop()
    }

    @Test func aPlayerThatLeavesWhileHungIsRemoved() async throws {
        let hung = try await startPlayer("hung")
        let players = try await RunningMediaPlayers(bus: bus, timeout: .seconds(30))
        #expect(await players.waitFor([hung.pid]))
        hung.suspend()
        // A frozen player is killed: the bus says its names are gone.
        hung.process.terminate(signal: SIGKILL)
        #expect(await players.waitFor([]))
        await players.stop()
    }
}
