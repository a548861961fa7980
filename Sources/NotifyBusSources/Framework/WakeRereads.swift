import Synchronization

/// The sources that re-read after a wake: `SystemSources.all(bus:options:)` hands `rereadAll`
/// to the `login` source and fills `sources` with every other source it made.
final class WakeRereads: Sendable {
    private let list = Mutex<[any NotifyBusSource]>([])

    /// The sources to re-read.
    var sources: [any NotifyBusSource] {
        get { list.withLock { $0 } }
        set { list.withLock { $0 = newValue } }
    }

    /// Starts `reread()` of every source, one after the other, as after `fg`, and returns at
    /// once (it is called on a loop thread, which must not wait for the re-reads).
    func rereadAll() {
        let sources = self.sources
        guard !sources.isEmpty else { return }
        Task {
            for source in sources { await source.reread() }
        }
    }
}
