/// When a Wayland window backend reports its list, as a plain state: the first list once the
/// round trips that bring every existing window's details came back, then each batch of events
/// that changed a listed window, and never the same list twice in a row; nothing after the end.
struct ToplevelListReport {
    /// Whether the backend ended (stopped, or the connection lost).
    private(set) var ended = false
    private var firstListKnown = false
    private var changed = false
    private var last: [ToplevelWindow]?

    /// A listed window changed (appeared, closed, or one of its listed details).
    mutating func windowsChanged() { changed = true }

    /// The round trips after the bind came back: the first list is known.
    mutating func firstListArrived() {
        firstListKnown = true
        changed = true
    }

    /// After a batch of events, the list to report, if any: `windows` in the order of their ids.
    mutating func afterEvents(_ windows: some Sequence<ToplevelWindow>) -> [ToplevelWindow]? {
        guard !ended, firstListKnown, changed else { return nil }
        changed = false
        let list = windows.sorted { $0.id < $1.id }
        guard list != last else { return nil }
        last = list
        return list
    }

    /// Ends it; whether it had not ended before (a loss is then reported, once).
    mutating func end() -> Bool {
        defer { ended = true }
        return !ended
    }
}
