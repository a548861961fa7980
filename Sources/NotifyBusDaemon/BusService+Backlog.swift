import DBus
import EpollLoop

extension BusService {
    /// A call waiting in `backlog`: the call, and what carries it out.
    struct Backlogged {
        let call: DBusMethodCall
        let carryOut: (BusService) -> (DBusMethodCall) -> Void
    }

    /// Puts `call` in the backlog, carried out by `carryOut` in its turn (at once, after the
    /// older calls, when the backlog would pass its bound).
    func later(_ call: DBusMethodCall, _ carryOut: @escaping (BusService) -> (DBusMethodCall) -> Void) {
        let bytes = Self.bytesPerCall + Self.patternBytes(of: call)
        performBacklog(backlog.arrived(Backlogged(call: call, carryOut: carryOut), bytes: bytes))
    }

    /// What a waiting call counts for besides its patterns (its message and its place in the
    /// backlog), so that calls with empty or tiny patterns are bounded in number too.
    static let bytesPerCall = 256

    /// Fails every call of the backlog (the service stops).
    func dropBacklog() {
        for waiting in backlog.takeAll() {
            waiting.call.fail(DBusError(name: DBusError.Name.failed, message: "the daemon is stopping"))
        }
    }

    private func performBacklog(_ actions: [CallBacklog<Backlogged>.Action]) {
        for action in actions {
            switch action {
            case .run(let waiting): waiting.carryOut(self)(waiting.call)
            case .schedule: context.runSoon { [weak self] in self?.runBacklogSlice() }
            }
        }
    }

    /// Carries out the backlog's oldest calls for at most a slice, then lets the loop read and
    /// answer what came meanwhile before the next slice.
    private func runBacklogSlice() {
        let started = ContinuousClock.now
        while let waiting = backlog.next(after: ContinuousClock.now - started) {
            waiting.carryOut(self)(waiting.call)
        }
        if backlog.sliceEnded() { context.runSoon { [weak self] in self?.runBacklogSlice() } }
    }

    /// The bytes of the patterns of a `Subscribe` or `Snapshot` call (its first argument).
    private static func patternBytes(of call: DBusMethodCall) -> Int {
        (call.arguments.first?.arrayElements ?? []).reduce(0) { $0 + ($1.stringValue?.utf8.count ?? 0) }
    }
}
