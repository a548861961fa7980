import DBus
@testable import NotifyBusLifecycle
import Testing

/// `MediaPlayers.State` driven without a bus.
@Suite struct MediaPlayersStateTests {
    typealias State = MediaPlayers.State

    /// `owner` acquires `name` (a `NameOwnerChanged`), answers its process and status; returns the serial.
    @discardableResult
    static func add(_ state: inout State, _ name: String, owner: String, pid: UInt32, status: DBusValue) -> UInt64? {
        let effects = state.ownerChanged(name: name, newOwner: owner)
        guard case .lookUpProcess(_, let serial)? = effects.first else { return nil }
        let ownerName = BusName(rawValue: owner)!
        _ = state.processLookedUp(owner: ownerName, serial: serial, processID: pid)
        _ = state.statusRead(owner: ownerName, serial: serial, value: status)
        return serial
    }

    @Test func playerNamesAreRecognized() {
        #expect(State.isPlayerName("org.mpris.MediaPlayer2.vlc"))
        #expect(State.isPlayerName("org.mpris.MediaPlayer2.firefox.instance_1_42"))
        #expect(!State.isPlayerName("org.mpris.MediaPlayer2"))
        #expect(!State.isPlayerName("org.mpris.MediaPlayer2."))
        #expect(!State.isPlayerName("org.freedesktop.Notifications"))
    }

    @Test func aNewPlayerIsAskedForItsProcessAndStatus() {
        var state = State(maximumPlayers: 4)
        let effects = state.ownerChanged(name: "org.mpris.MediaPlayer2.a", newOwner: ":1.5")
        #expect(effects == [.lookUpProcess(owner: ":1.5", serial: 1), .readStatus(owner: ":1.5", serial: 1)])
        _ = state.processLookedUp(owner: ":1.5", serial: 1, processID: 42)
        #expect(state.playingProcesses.isEmpty)
        _ = state.statusRead(owner: ":1.5", serial: 1, value: .string("Playing"))
        #expect(state.playingProcesses == [42])
        _ = state.propertiesChanged(sender: ":1.5", changed: ["PlaybackStatus": .string("Paused")], invalidated: [])
        #expect(state.playingProcesses.isEmpty)
        #expect(state.propertiesChanged(sender: ":1.5", changed: [:], invalidated: ["PlaybackStatus"])
            == [.readStatus(owner: ":1.5", serial: 1)])
    }

    @Test func aSecondNameOfTheSamePlayerAsksNothingAndTheLastNameRemovesIt() {
        var state = State(maximumPlayers: 4)
        Self.add(&state, "org.mpris.MediaPlayer2.a", owner: ":1.5", pid: 42, status: .string("Playing"))
        #expect(state.ownerChanged(name: "org.mpris.MediaPlayer2.a.instance2", newOwner: ":1.5").isEmpty)
        _ = state.ownerChanged(name: "org.mpris.MediaPlayer2.a", newOwner: "")
        #expect(state.playingProcesses == [42])
        _ = state.ownerChanged(name: "org.mpris.MediaPlayer2.a.instance2", newOwner: "")
        #expect(state.playingProcesses.isEmpty)
        #expect(state.players.isEmpty && state.owners.isEmpty)
    }

    @Test func aConnectionLeavingTakesItsPlayerAlong() {
        var state = State(maximumPlayers: 4)
        Self.add(&state, "org.mpris.MediaPlayer2.a", owner: ":1.5", pid: 42, status: .string("Playing"))
        _ = state.ownerChanged(name: ":1.5", newOwner: "")
        #expect(state.playingProcesses.isEmpty)
        #expect(state.players.isEmpty && state.owners.isEmpty)
    }

    @Test func answersForAnEarlierPlayerAreDropped() {
        var state = State(maximumPlayers: 4)
        let first = Self.add(&state, "org.mpris.MediaPlayer2.a", owner: ":1.5", pid: 42, status: .string("Paused"))
        _ = state.ownerChanged(name: "org.mpris.MediaPlayer2.a", newOwner: "")
        let effects = state.ownerChanged(name: "org.mpris.MediaPlayer2.a", newOwner: ":1.5")
        #expect(effects == [.lookUpProcess(owner: ":1.5", serial: 2), .readStatus(owner: ":1.5", serial: 2)])
        _ = state.processLookedUp(owner: ":1.5", serial: 2, processID: 42)
        _ = state.statusRead(owner: ":1.5", serial: first!, value: .string("Playing"))
        #expect(state.playingProcesses.isEmpty)
        _ = state.statusRead(owner: ":1.5", serial: 2, value: .string("Playing"))
        #expect(state.playingProcesses == [42])
    }

    @Test func aWrongTypeIsNotPlayingAndWarnedOncePerPlayer() {
        var state = State(maximumPlayers: 4)
        _ = state.ownerChanged(name: "org.mpris.MediaPlayer2.a", newOwner: ":1.5")
        _ = state.processLookedUp(owner: ":1.5", serial: 1, processID: 42)
        _ = state.statusRead(owner: ":1.5", serial: 1, value: .string("Playing"))
        let first = state.propertiesChanged(sender: ":1.5", changed: ["PlaybackStatus": .int32(1)], invalidated: [])
        #expect(first.count == 1)
        #expect(state.playingProcesses.isEmpty)
        #expect(state.propertiesChanged(sender: ":1.5", changed: ["PlaybackStatus": .boolean(true)], invalidated: []).isEmpty)
        _ = state.propertiesChanged(sender: ":1.5", changed: ["PlaybackStatus": .string("Playing")], invalidated: [])
        #expect(state.playingProcesses == [42])
    }

    @Test func aTimeoutKeepsTheStatusAndAnErrorIsNotPlaying() {
        var state = State(maximumPlayers: 4)
        _ = state.ownerChanged(name: "org.mpris.MediaPlayer2.a", newOwner: ":1.5")
        _ = state.processLookedUp(owner: ":1.5", serial: 1, processID: 42)
        _ = state.propertiesChanged(sender: ":1.5", changed: ["PlaybackStatus": .string("Playing")], invalidated: [])
        _ = state.statusFailed(owner: ":1.5", serial: 1, error: DBusError(name: DBusError.Name.noReply, message: ""))
        #expect(state.playingProcesses == [42])
        _ = state.statusFailed(owner: ":1.5", serial: 1, error: DBusError(name: DBusError.Name.unknownProperty, message: ""))
        #expect(state.playingProcesses.isEmpty)
    }

    @Test func signalsFromOthersAndBadProcessIDsAreIgnored() {
        var state = State(maximumPlayers: 4)
        _ = state.ownerChanged(name: "org.mpris.MediaPlayer2.a", newOwner: ":1.5")
        _ = state.processLookedUp(owner: ":1.5", serial: 1, processID: 0)
        _ = state.statusRead(owner: ":1.5", serial: 1, value: .string("Playing"))
        #expect(state.playingProcesses.isEmpty)
        _ = state.processLookedUp(owner: ":1.5", serial: 1, processID: UInt32.max)
        #expect(state.playingProcesses.isEmpty)
        #expect(state.propertiesChanged(sender: ":1.9", changed: ["PlaybackStatus": .string("Playing")], invalidated: []).isEmpty)
        #expect(state.players[":1.9"] == nil)
    }

    @Test func listedNamesAreLookedUpOnceAndASignalSettlesALookup() {
        var state = State(maximumPlayers: 4)
        let effects = state.listed([":1.1", "org.freedesktop.DBus", "org.mpris.MediaPlayer2.a", "org.mpris.MediaPlayer2.b"])
        #expect(effects == [.lookUpOwner("org.mpris.MediaPlayer2.a"), .lookUpOwner("org.mpris.MediaPlayer2.b")])
        #expect(state.listed(["org.mpris.MediaPlayer2.a"]).isEmpty)
        // `b` changed owner before its answer came: the answer (which can only agree) is ignored.
        _ = state.ownerChanged(name: "org.mpris.MediaPlayer2.b", newOwner: ":1.7")
        #expect(state.ownerLookedUp("org.mpris.MediaPlayer2.b", owner: ":1.7").isEmpty)
        #expect(state.ownerLookedUp("org.mpris.MediaPlayer2.a", owner: ":1.6")
            == [.lookUpProcess(owner: ":1.6", serial: 2), .readStatus(owner: ":1.6", serial: 2)])
        #expect(state.ownerLookedUp("org.mpris.MediaPlayer2.a", owner: ":1.6").isEmpty)
        #expect(state.players.count == 2 && state.lookups.isEmpty)
    }

    @Test func playersPastTheCapAreIgnoredAndTheFirstSkipLogged() {
        var state = State(maximumPlayers: 3, maximumNamesPerPlayer: 2)
        var warnings = 0
        for index in 0..<1000 {
            let effects = state.ownerChanged(name: "org.mpris.MediaPlayer2.p\(index)", newOwner: ":1.\(index)")
            warnings += effects.filter { if case .warn = $0 { true } else { false } }.count
        }
        #expect(state.players.count == 3)
        #expect(state.owners.count == 3)
        #expect(warnings == 1)
        // One hostile connection with many names: kept to two of them.
        for index in 0..<1000 {
            let effects = state.ownerChanged(name: "org.mpris.MediaPlayer2.q\(index)", newOwner: ":1.0")
            warnings += effects.filter { if case .warn = $0 { true } else { false } }.count
        }
        #expect(state.players[":1.0"]?.names.count == 2)
        #expect(state.owners.count == 4)
        #expect(warnings == 2)
    }

    @Test func listedNamesAreAskedAFewAtATimeAndAHostileOwnerHidesNoPlayer() {
        var state = State(maximumPlayers: 4, maximumNamesPerPlayer: 2, maximumListedNames: 100, concurrentLookups: 4)
        // One connection lists 99 names before a real player's.
        var names = (0..<99).map { "org.mpris.MediaPlayer2.hostile\($0)" }
        names.append("org.mpris.MediaPlayer2.real")
        names += (0..<50).map { "org.mpris.MediaPlayer2.late\($0)" }
        var pending = state.listed(names)
        #expect(pending.filter { if case .warn = $0 { true } else { false } }.count == 1)
        #expect(state.lookups.count == 4)
        var asked = 0
        while let effect = pending.first {
            pending.removeFirst()
            guard case .lookUpOwner(let name) = effect else { continue }
            asked += 1
            #expect(state.lookups.count <= 4)
            let owner: BusName = name == "org.mpris.MediaPlayer2.real" ? ":1.2" : ":1.1"
            pending += state.ownerLookedUp(name, owner: owner)
        }
        #expect(asked == 100)
        #expect(state.lookups.isEmpty && state.queued.isEmpty)
        #expect(state.players.count == 2)
        #expect(state.players[":1.1"]?.names.count == 2)
        #expect(state.owners["org.mpris.MediaPlayer2.real"] == ":1.2")
    }
}
