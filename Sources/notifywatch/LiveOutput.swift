#if canImport(Glibc)
import Glibc
#endif
import Foundation
import NotifyBus
import NotifyBusLog
import NotifyBusSources
import Synchronization

/// What `notifywatch` prints while watching: human columns or CONTRACT.md §3's JSON lines,
/// one complete line per `write(2)`, from any thread.
final class LiveOutput: Sendable {
    let json: Bool
    let subscriber: String
    /// Wall-clock time of the bus's start (t = 0).
    let origin: Date
    private let out: Mutex<OutputStream>
    private let human: HumanFormat

    init(json: Bool, color: Bool, subscriber: String, origin: Date) {
        self.json = json
        self.subscriber = subscriber
        self.origin = origin
        self.out = Mutex(OutputStream(fd: STDOUT_FILENO, lineBuffered: true))
        var human = HumanFormat(color: color, showSubscriber: false, origin: origin)
        human.keyWidth = 24
        self.human = human
    }

    func event(_ event: SubscriptionEvent) {
        let time = Self.time(of: event)
        let t = LogTime(time)
        let line: String
        if json {
            let wall = event.notification.map { _ in Self.rfc3339(origin.addingTimeInterval(t.seconds)) }
            line = event.contractJSON(t: t.json, subscriber: subscriber, time: wall)
        } else {
            line = human.format(seconds: t.seconds, subscriber: subscriber, event: event)
        }
        out.withLock { $0.line(line) }
    }

    func source(_ name: String, _ status: SourceStatus, at time: Duration) {
        let t = LogTime(time)
        let line: String
        if json {
            var object: JSONObject = ["type": "source", "t": t.json, "source": .string(name), "status": .string(status.name)]
            if let reason = status.reason { object["reason"] = .string(reason) }
            line = JSONValue.object(object).jsonText
        } else {
            let mark = switch status {
            case .running: human.paint("● source \(name): running", "32")
            case .unavailable(let reason), .starting(let reason):
                human.paint("○ source \(name): unavailable — \(reason)", "33")
            case .failed(let reason): human.paint("✖ source \(name): failed — \(reason)", "31")
            }
            line = human.paint(human.timeColumn(t.seconds), "2") + "  " + mark
        }
        out.withLock { $0.line(line) }
    }

    static func time(of event: SubscriptionEvent) -> Duration {
        switch event {
        case .notification(let n): n.time
        case .suspended(let time), .resumed(let time, _), .resync(let time, _): time
        }
    }

    /// RFC 3339 in local time with its offset, to the millisecond: `2026-11-21T10:00:00.250+01:00`.
    static func rfc3339(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        var whole = time_t(seconds.rounded(.down))
        let millis = Int(((seconds - Double(whole)) * 1000).rounded(.down))
        var parts = tm()
        localtime_r(&whole, &parts)
        var buffer = [CChar](repeating: 0, count: 64)
        strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S", &parts)
        let offset = Int(parts.tm_gmtoff)
        let zone = (offset < 0 ? "-" : "+") + String(format: "%02d:%02d", abs(offset) / 3600, (abs(offset) % 3600) / 60)
        let base = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return base + String(format: ".%03d", millis) + zone
    }
}
