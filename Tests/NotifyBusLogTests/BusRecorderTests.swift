import Foundation
import NotifyBus
import NotifyBusLog
import Synchronization
import Testing

@Suite struct BusRecorderTests {
    /// A live session, recorded, replays to the notifications the live subscriber received.
    @Test func aRecordingReplaysToTheSameNotifications() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rec-\(UUID()).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let bus = NotificationBus()
        let recorder = BusRecorder(bus: bus, writer: try EventLogWriter(path: path, metadata: ["host": "test"]))
        bus.publish("orientation", "portrait")
        bus.publish("battery/BAT0/level", 0.5)
        let live = Mutex<[SubscriptionEvent]>([])
        let watcher = bus.subscribe(["**"], policy: .latest, initial: .current, name: "watch") { event in
            live.withLock { $0.append(event) }
        }
        let unnamed = bus.subscribe(["orientation"])  // not recorded
        DispatchQueue.concurrentPerform(iterations: 3) { worker in
            for i in 0..<300 {
                if worker == 2 {
                    if i % 50 == 0 { watcher.suspend() }
                    if i % 50 == 25 { watcher.resume() }
                } else {
                    bus.publish(worker == 0 ? "orientation" : "battery/BAT0/level", .integer(Int64(i % 7)))
                }
            }
        }
        watcher.resume()
        unnamed.cancel()
        recorder.finish()
        #expect(recorder.failure == nil)

        let log = try EventLog(parsing: String(contentsOfFile: path, encoding: .utf8), file: path)
        var replayed: [SubscriptionEvent] = []
        try LogReplayer(log: log).run { lines in replayed += lines.filter { $0.subscriber == "watch" }.map(\.event) }
        let liveEvents = live.withLock { $0 }
        #expect(replayed.count == liveEvents.count)
        #expect(replayed.map(Self.essence) == liveEvents.map(Self.essence))
        #expect(liveEvents.contains { if case .resumed = $0 { true } else { false } })
    }

    /// Numbers past 64 bits and past a double's range are recorded with their digits and
    /// replay with them.
    @Test func aRecordingKeepsNumbersAsWritten() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rec-\(UUID()).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let bus = NotificationBus()
        let recorder = BusRecorder(bus: bus, writer: try EventLogWriter(path: path))
        let values = ["99999999999999999999", "-18446744073709551616", "1e400", "[1e-400,{\"n\":123456789012345678901234567890}]"]
        for text in values { bus.publish("k", try JSONValue(parsing: text)) }
        recorder.finish()
        #expect(recorder.failure == nil)
        let written = try String(contentsOfFile: path, encoding: .utf8)
        for text in values { #expect(written.contains("\"value\":\(text)")) }
        var replayed: [String] = []
        try LogReplayer(log: try EventLog(parsing: written, file: path)).run { lines in
            replayed += lines.compactMap { line in
                if case .notification(let n) = line.event { n.value.jsonText } else { nil }
            }
        }
        #expect(replayed == values)
    }

    /// What must agree between live and replay (times are rounded to microseconds in a log).
    static func essence(_ event: SubscriptionEvent) -> String {
        switch event {
        case .notification(let n): "\(n.key)=\(n.value) ×\(n.coalesced) prev \(n.previous?.jsonText ?? "-")"
        case .suspended: "suspended"
        case .resumed(_, let flushed): "resumed \(flushed)"
        case .resync: "resync"
        }
    }
}
