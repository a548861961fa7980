#if canImport(Glibc)
import Glibc
#endif
import NotifyBus
import NotifyBusLog
import NotifyBusSources
import Synchronization
import SystemSupport

/// What `notifywatch` prints while watching: human columns or the specification's JSON lines,
/// one complete line per `write(2)`, from any thread.
///
/// While the watcher is suspended nothing is printed, `source` lines included: a source's status
/// changes are held (the latest per source) and printed after the resume's flush, at its `t`, for
/// each source whose status then differs from the one last printed (a service that went away and
/// came back while the watcher was suspended prints nothing, as a key that changed and changed back
/// under `--policy changed`).
final class LiveOutput: Sendable {
    let json: Bool
    let subscriber: String
    /// Wall-clock time of the bus's start (t = 0).
    let origin: WallTime
    private let out: Mutex<State>
    private let human: HumanFormat

    private struct State {
        var stream: OutputStream
        var encoder = JSONLinesWriter()
        /// Between a `suspended` line and the end of the next resume's flush.
        var holding = false
        /// How many flushed notifications are still to come after a `resumed` line.
        var flushRemaining = 0
        /// The status last printed for each source.
        var printed: [String: SourceStatus] = [:]
        /// Status changes held while suspended, the latest per source, in order of first change,
        /// with a way to read the source's status when they are released.
        var held: [(source: String, status: SourceStatus, current: (@Sendable () -> SourceStatus)?)] = []
    }

    init(json: Bool, color: Bool, subscriber: String, origin: WallTime) {
        self.json = json
        self.subscriber = subscriber
        self.origin = origin
        self.out = Mutex(State(stream: OutputStream(fd: STDOUT_FILENO, lineBuffered: true)))
        var human = HumanFormat(color: color, showSubscriber: false, origin: origin)
        human.keyWidth = 24
        self.human = human
    }

    func event(_ event: SubscriptionEvent) {
        let time = Self.time(of: event)
        let t = LogTime(time)
        let wall = json ? event.notification.map { _ in LocalTime(origin.advanced(bySeconds: t.seconds)).rfc3339 } : nil
        let line = json ? nil : human.format(seconds: t.seconds, subscriber: subscriber, event: event)
        out.withLock { state in
            if let line {
                state.stream.line(line)
            } else {
                state.stream.line { state.encoder.encode(event, t: t.json, subscriber: subscriber, time: wall, into: &$0) }
            }
            switch event {
            case .suspended:
                state.holding = true
            case .resumed(_, let flushed):
                state.holding = false
                state.flushRemaining = flushed
                if flushed == 0 { releaseHeld(&state, at: time) }
            case .notification:
                guard state.flushRemaining > 0 else { break }
                state.flushRemaining -= 1
                if state.flushRemaining == 0 { releaseHeld(&state, at: time) }
            case .resync:
                break
            }
        }
    }

    /// Prints a `source` line for `status`, unless it is the one last printed for `name`; held
    /// while the watcher is suspended or its flush is still coming. `current` reads the source's
    /// status: a held change is released as the status the source has then (the reader of its
    /// changes may lag behind, with a change that has since given way to another).
    func source(
        _ name: String, _ status: SourceStatus, at time: Duration, current: (@Sendable () -> SourceStatus)? = nil
    ) {
        out.withLock { state in
            if state.holding || state.flushRemaining > 0 {
                if let index = state.held.firstIndex(where: { $0.source == name }) {
                    state.held[index].status = status
                } else {
                    state.held.append((name, status, current))
                }
                return
            }
            let status = Self.latest(status, current)
            guard state.printed[name] != status else { return }
            state.printed[name] = status
            writeSource(name, status, at: time, to: &state)
        }
    }

    /// `status`, or the source's status now when that has settled on something else since.
    private static func latest(_ status: SourceStatus, _ current: (@Sendable () -> SourceStatus)?) -> SourceStatus {
        guard let now = current?(), now.isSettled else { return status }
        return now
    }

    private func releaseHeld(_ state: inout State, at time: Duration) {
        let held = state.held
        state.held = []
        for (name, heldStatus, current) in held {
            let status = Self.latest(heldStatus, current)
            guard state.printed[name] != status else { continue }
            state.printed[name] = status
            writeSource(name, status, at: time, to: &state)
        }
    }

    /// Prints the `source` line for `status`.
    private func writeSource(_ name: String, _ status: SourceStatus, at time: Duration, to state: inout State) {
        let t = LogTime(time)
        if json {
            state.stream.line { state.encoder.encodeSource(name, status, t: t.json, into: &$0) }
        } else {
            let mark = switch status {
            case .running: human.paint("● source \(name): running", "32")
            case .unavailable(let reason), .starting(let reason):
                human.paint("○ source \(name): unavailable — \(reason)", "33")
            case .failed(let reason): human.paint("✖ source \(name): failed — \(reason)", "31")
            }
            state.stream.line(human.paint(human.timeColumn(t.seconds), "2") + "  " + mark)
        }
    }

    static func time(of event: SubscriptionEvent) -> Duration {
        switch event {
        case .notification(let n): n.time
        case .suspended(let time), .resumed(let time, _), .resync(let time, _): time
        }
    }
}
