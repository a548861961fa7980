import DBus

extension ProtectedProcesses {
    /// The owners of the protected names and their processes, changed by what the bus daemon
    /// says, without side effects: a change returns the process lookup to start, and
    /// `processes` is read after it.
    ///
    /// The bus daemon itself is one more entry, the name `org.freedesktop.DBus` owned by
    /// itself: `GetConnectionUnixProcessID("org.freedesktop.DBus")` is its own process.
    struct State {
        /// One protected name.
        struct Entry: Equatable {
            /// Its owner's unique name; `nil` while it has none or it is not known.
            var owner: BusName?
            /// The owner's process, once the bus daemon told it.
            var processID: Int32?
            /// The number of the latest process lookup: older answers are dropped.
            var lookup: UInt64 = 0
        }

        /// A process lookup to start: `GetConnectionUnixProcessID(owner)` for `name`.
        struct Lookup: Equatable {
            let name: BusName
            let owner: BusName
            let number: UInt64
        }

        private(set) var entries: [BusName: Entry] = [:]
        private var nextLookup: UInt64 = 1

        /// The processes of every known owner.
        var processes: Set<Int32> {
            Set(entries.values.compactMap(\.processID))
        }

        /// `name` has the owner `owner` now (`nil`: none), as the bus daemon said (at start, after
        /// a reconnection, at every change). Another owner's process is dropped at once; the same
        /// owner's is kept until the new answer (a reconnection to a restarted bus may have
        /// given the name to another process under the same unique name).
        mutating func ownerChanged(_ name: BusName, to owner: BusName?) -> Lookup? {
            var entry = entries[name] ?? Entry()
            if entry.owner != owner { entry.processID = nil }
            entry.owner = owner
            entry.lookup = nextLookup
            nextLookup &+= 1
            entries[name] = entry
            guard let owner else { return nil }
            return Lookup(name: name, owner: owner, number: entry.lookup)
        }

        /// The answer to `lookup`: the owner's process, `nil` when the question failed (the
        /// owner left meanwhile: its `NameOwnerChanged` follows) or the answer is not a process ID.
        mutating func processLookedUp(_ lookup: Lookup, processID: UInt32?) {
            guard var entry = entries[lookup.name], entry.lookup == lookup.number else { return }
            entry.processID = processID.flatMap { Int32(exactly: $0) }.flatMap { $0 > 0 ? $0 : nil }
            entries[lookup.name] = entry
        }

        /// Forgets everything.
        mutating func reset() {
            entries = [:]
        }
    }
}
