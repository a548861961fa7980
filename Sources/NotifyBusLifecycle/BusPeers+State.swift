extension BusPeers {
    /// The session bus's connections and well-known names as the bus daemon tells them, without
    /// side effects: each change returns the lookups to start.
    ///
    /// Messages are taken in the order the bus sent them (`ListNames`' answer, `NameOwnerChanged`,
    /// the lookups' answers), so each is the bus's state at its moment. It is complete once the
    /// first list is known and no lookup is outstanding.
    struct State: Sendable {
        /// One connection.
        struct Peer: Sendable, Hashable {
            /// Its process, once the bus daemon said.
            var processID: Int32?
            /// Whether `GetConnectionCredentials` is outstanding.
            var lookingUp = true
        }

        /// A lookup to start.
        enum Lookup: Sendable, Hashable {
            /// `GetConnectionCredentials(name)`: its process.
            case process(String)
            /// `GetNameOwner(name)`: a well-known name's owner.
            case owner(String)
        }

        /// The most connections and names followed: past either, it is not complete (and what
        /// needs every connection known, the wake watch, refuses).
        static let maximumPeers = 8192
        static let maximumNames = 32768

        private(set) var peers: [String: Peer] = [:]
        /// Each well-known name's owner (a unique name); `nil` while asked.
        private(set) var owners: [String: String?] = [:]
        private(set) var listed = false
        private(set) var overflowed = false

        /// Whether every connection's process and every name's owner is known.
        var isComplete: Bool {
            listed && !overflowed && !peers.values.contains(where: \.lookingUp) && !owners.values.contains(where: { $0 == nil })
        }

        /// Connected (again): everything is asked again.
        mutating func reset() {
            self = State()
        }

        /// `ListNames` answered.
        mutating func listed(_ names: [String]) -> [Lookup] {
            listed = true
            var lookups: [Lookup] = []
            for name in names where !name.isEmpty {
                if name.hasPrefix(":") {
                    guard peers[name] == nil else { continue }
                    guard peers.count < Self.maximumPeers else { overflowed = true; continue }
                    peers[name] = Peer()
                    lookups.append(.process(name))
                } else if name != "org.freedesktop.DBus", owners[name] == nil {
                    guard owners.count < Self.maximumNames else { overflowed = true; continue }
                    owners[name] = .some(nil)
                    lookups.append(.owner(name))
                }
            }
            return lookups
        }

        /// `NameOwnerChanged(name, old, new)`.
        mutating func ownerChanged(_ name: String, from old: String, to new: String) -> [Lookup] {
            if name.hasPrefix(":") {
                if new.isEmpty {
                    peers[name] = nil
                    return []
                }
                guard peers[name] == nil else { return [] }
                guard peers.count < Self.maximumPeers else { overflowed = true; return [] }
                peers[name] = Peer()
                return [.process(name)]
            }
            if new.isEmpty {
                owners[name] = nil
            } else if owners[name] != nil || owners.count < Self.maximumNames {
                owners[name] = .some(new)
            } else {
                overflowed = true
            }
            return []
        }

        /// The answer to `.process(name)`; `nil` when the question failed (the peer left).
        mutating func processLookedUp(_ name: String, processID: UInt32?) {
            guard peers[name] != nil else { return }
            guard let pid = processID.flatMap({ Int32(exactly: $0) }), pid > 0 else {
                peers[name] = nil
                return
            }
            peers[name] = Peer(processID: pid, lookingUp: false)
        }

        /// The answer to `.owner(name)`; `nil`: it has none (any more).
        mutating func ownerLookedUp(_ name: String, owner: String?) {
            guard case .some(.none) = owners[name] else { return }
            if let owner { owners[name] = .some(owner) } else { owners[name] = nil }
        }

        /// The well-known names each connection owns.
        var namesOfPeers: [String: [String]] {
            var names: [String: [String]] = [:]
            for (name, owner) in owners { if let unique = owner { names[unique, default: []].append(name) } }
            return names
        }

        /// The owner of the well-known name `name`, and its process, where known.
        func owner(of name: String) -> (unique: String, processID: Int32?)? {
            guard case .some(.some(let unique)) = owners[name] else { return nil }
            return (unique, peers[unique]?.processID)
        }
    }
}
