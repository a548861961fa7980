/// A set of processes as last reported: what `ProtectedProcesses` and `MediaPlayers` tell their
/// `onChange` only when it differs (so never the first, empty one).
struct ReportedProcesses {
    /// The set as last reported.
    private(set) var processes: Set<Int32> = []

    /// `now` when it differs from the set last reported, which it then becomes; else `nil`.
    mutating func change(to now: Set<Int32>) -> Set<Int32>? {
        guard now != processes else { return nil }
        processes = now
        return now
    }
}
