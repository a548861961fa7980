import DBus

extension MediaPlayers {
    /// What `MediaPlayers` knows of the MPRIS players on the bus, changed by what the bus and the
    /// players say, without side effects: each change returns what to ask or log next
    /// (`Effect`), and `playingProcesses` is read after it.
    ///
    /// Messages from one sender arrive in the order it sent them, so answers and signals are
    /// applied in the order they arrive: the bus daemon's `GetNameOwner` answer is newer than
    /// every `NameOwnerChanged` that came before it, a player's `Get` answer newer than every
    /// `PropertiesChanged` it sent before it.
    ///
    /// Bounded: at most `maximumPlayers` players (connections owning a player name), at most
    /// `maximumNamesPerPlayer` names kept per player, at most `maximumListedNames` player names
    /// of `ListNames` waiting for their owner to be asked, `concurrentLookups` of them asked at a
    /// time; names past those are ignored, and the first skip logged.
    struct State {
        /// One connection that owns one or more `org.mpris.MediaPlayer2.*` names.
        struct Player: Equatable {
            /// Tells this player's answers from those of an earlier one with the same unique name.
            let serial: UInt64
            /// The player names it owns (at most `maximumNamesPerPlayer`).
            var names: Set<BusName>
            /// Its process, once the bus daemon told it.
            var processID: Int32?
            /// Whether its `PlaybackStatus` is `"Playing"` (not until it said so).
            var isPlaying = false
            /// Whether a `PlaybackStatus` of a wrong type was logged for it.
            var loggedWrongType = false
        }

        /// What to do after a change.
        enum Effect: Equatable {
            /// Ask the bus daemon for the owner of a player name (`GetNameOwner`).
            case lookUpOwner(BusName)
            /// Ask the bus daemon for the process of a player (`GetConnectionUnixProcessID`).
            case lookUpProcess(owner: BusName, serial: UInt64)
            /// Ask a player for its `PlaybackStatus` (`Get`, asynchronous).
            case readStatus(owner: BusName, serial: UInt64)
            /// Log a warning.
            case warn(String)
            /// Log at debug level.
            case note(String)
        }

        /// Every player name begins with this.
        static let namePrefix = "org.mpris.MediaPlayer2."

        /// The most players followed.
        let maximumPlayers: Int
        /// The most names kept per player.
        let maximumNamesPerPlayer: Int
        /// The most listed player names waiting for their owner to be asked.
        let maximumListedNames: Int
        /// The most owner lookups asked at a time.
        let concurrentLookups: Int
        /// The players, by unique name.
        private(set) var players: [BusName: Player] = [:]
        /// The owner of each followed player name.
        private(set) var owners: [BusName: BusName] = [:]
        /// The player names whose owner was asked for and not answered yet.
        private(set) var lookups: Set<BusName> = []
        /// Listed player names whose owner is still to be asked, the next one last.
        private var queue: [BusName] = []
        /// The names of `queue` still to be asked (a `NameOwnerChanged` settles a name).
        private(set) var queued: Set<BusName> = []
        private var nextSerial: UInt64 = 1
        private var loggedFull = false
        private var loggedManyNames = false
        private var loggedManyListed = false

        init(maximumPlayers: Int, maximumNamesPerPlayer: Int = 8, maximumListedNames: Int = 4096, concurrentLookups: Int = 16) {
            self.maximumPlayers = max(0, maximumPlayers)
            self.maximumNamesPerPlayer = max(1, maximumNamesPerPlayer)
            self.maximumListedNames = max(0, maximumListedNames)
            self.concurrentLookups = max(1, concurrentLookups)
        }

        /// Whether `text` is a player's name: `org.mpris.MediaPlayer2.` and more.
        static func isPlayerName(_ text: String) -> Bool {
            text.utf8.count > namePrefix.utf8.count && text.hasPrefix(namePrefix)
        }

        /// The processes whose players are playing.
        var playingProcesses: Set<Int32> {
            var result: Set<Int32> = []
            for player in players.values where player.isPlaying {
                if let pid = player.processID { result.insert(pid) }
            }
            return result
        }

        /// Forgets everything (a new connection to the bus). The limits' warnings are not repeated.
        mutating func reset() {
            players = [:]
            owners = [:]
            lookups = []
            queue = []
            queued = []
        }

        // MARK: Names

        /// The bus daemon's `ListNames` answer: the owner of each player name not followed yet is
        /// asked for, `concurrentLookups` at a time.
        mutating func listed(_ names: [String]) -> [Effect] {
            var effects: [Effect] = []
            var added: [BusName] = []
            for text in names where Self.isPlayerName(text) {
                guard let name = BusName(rawValue: text), owners[name] == nil, !lookups.contains(name), !queued.contains(name)
                else { continue }
                guard queued.count < maximumListedNames else {
                    if !loggedManyListed {
                        loggedManyListed = true
                        effects.append(.warn(
                            "the bus lists more than \(maximumListedNames) player names; \(name) and later ones are not followed"))
                    }
                    break
                }
                queued.insert(name)
                added.append(name)
            }
            queue = added.reversed() + queue
            return effects + nextLookups()
        }

        /// The bus daemon's answer to `GetNameOwner(name)`: `nil` when the name has no owner
        /// (or the question failed). Ignored when a `NameOwnerChanged` of the name came first (the
        /// answer can only agree with it). The next queued name is asked for.
        mutating func ownerLookedUp(_ name: BusName, owner: BusName?) -> [Effect] {
            guard lookups.remove(name) != nil else { return nextLookups() }
            guard let owner else { return nextLookups() }
            return attach(name, to: owner) + nextLookups()
        }

        /// Asks for the owners of queued names while fewer than `concurrentLookups` are asked.
        private mutating func nextLookups() -> [Effect] {
            var effects: [Effect] = []
            while lookups.count < concurrentLookups, let name = queue.popLast() {
                guard queued.remove(name) != nil else { continue }
                lookups.insert(name)
                effects.append(.lookUpOwner(name))
            }
            return effects
        }

        /// `NameOwnerChanged(name, old, new)` from the bus daemon: a player name changed owner,
        /// or a unique name left the bus (`new` empty).
        mutating func ownerChanged(name text: String, newOwner: String) -> [Effect] {
            guard let name = BusName(rawValue: text) else { return [] }
            if name.isUnique {
                // A connection left: every name it had goes with it (the bus says so first).
                if newOwner.isEmpty, let player = players.removeValue(forKey: name) {
                    for playerName in player.names where owners[playerName] == name { owners[playerName] = nil }
                }
                return []
            }
            guard Self.isPlayerName(text) else { return [] }
            queued.remove(name)
            let wasAsked = lookups.remove(name) != nil
            detach(name)
            var effects: [Effect] = []
            if !newOwner.isEmpty, let owner = BusName(rawValue: newOwner) { effects = attach(name, to: owner) }
            return wasAsked ? effects + nextLookups() : effects
        }

        private mutating func attach(_ name: BusName, to owner: BusName) -> [Effect] {
            detach(name)
            if var player = players[owner] {
                guard player.names.count < maximumNamesPerPlayer else {
                    if loggedManyNames { return [] }
                    loggedManyNames = true
                    return [.warn(
                        "\(owner) owns more than \(maximumNamesPerPlayer) player names; \(name) and later ones are not followed")]
                }
                player.names.insert(name)
                players[owner] = player
                owners[name] = owner
                return []
            }
            guard players.count < maximumPlayers else {
                return full("\(name) (\(owner)) is not followed")
            }
            let serial = nextSerial
            nextSerial &+= 1
            players[owner] = Player(serial: serial, names: [name])
            owners[name] = owner
            return [.lookUpProcess(owner: owner, serial: serial), .readStatus(owner: owner, serial: serial)]
        }

        private mutating func detach(_ name: BusName) {
            guard let owner = owners.removeValue(forKey: name), var player = players[owner] else { return }
            player.names.remove(name)
            players[owner] = player.names.isEmpty ? nil : player
        }

        private mutating func full(_ what: String) -> [Effect] {
            if loggedFull { return [] }
            loggedFull = true
            return [.warn("following at most \(maximumPlayers) media players: \(what)")]
        }

        // MARK: Processes and statuses

        /// The bus daemon's answer to `GetConnectionUnixProcessID`: `nil` when it failed (the
        /// player left meanwhile) or is not a process ID.
        mutating func processLookedUp(owner: BusName, serial: UInt64, processID: UInt32?) -> [Effect] {
            guard var player = players[owner], player.serial == serial else { return [] }
            guard let processID, let pid = Int32(exactly: processID), pid > 0 else {
                return [.note("no process ID for the media player \(owner)")]
            }
            player.processID = pid
            players[owner] = player
            return []
        }

        /// A player's answer to `Get(PlaybackStatus)`, the variant's value.
        mutating func statusRead(owner: BusName, serial: UInt64, value: DBusValue) -> [Effect] {
            guard players[owner]?.serial == serial else { return [] }
            return apply(value, from: owner)
        }

        /// `Get(PlaybackStatus)` failed. A timeout, or the connection lost, leaves the status
        /// as it is (a `PropertiesChanged` may have come meanwhile); any other error (no such
        /// property, an answer that is not a variant) means not playing.
        mutating func statusFailed(owner: BusName, serial: UInt64, error: DBusError) -> [Effect] {
            guard var player = players[owner], player.serial == serial else { return [] }
            let note = Effect.note("reading PlaybackStatus of \(owner) failed: \(error)")
            if error.name == DBusError.Name.noReply || error.name == DBusError.Name.disconnected { return [note] }
            player.isPlaying = false
            players[owner] = player
            return [note]
        }

        /// `PropertiesChanged` of `org.mpris.MediaPlayer2.Player` from `sender`: a new
        /// `PlaybackStatus` is applied; an invalidated one is read again.
        mutating func propertiesChanged(sender: BusName, changed: [String: DBusValue], invalidated: [String]) -> [Effect] {
            guard let player = players[sender] else { return [] }
            if let value = changed["PlaybackStatus"] { return apply(value, from: sender) }
            if invalidated.contains("PlaybackStatus") { return [.readStatus(owner: sender, serial: player.serial)] }
            return []
        }

        private mutating func apply(_ value: DBusValue, from owner: BusName) -> [Effect] {
            guard var player = players[owner] else { return [] }
            var effects: [Effect] = []
            if case .string(let status) = value {
                player.isPlaying = status == "Playing"
            } else {
                player.isPlaying = false
                if !player.loggedWrongType {
                    player.loggedWrongType = true
                    let names = player.names.map(\.rawValue).sorted().joined(separator: ", ")
                    effects.append(.warn(
                        "PlaybackStatus of \(names) (\(owner)) has type '\(value.signature)', expected 's'; "
                            + "counted as not playing"))
                }
            }
            players[owner] = player
            return effects
        }
    }
}
