import NotifyBus
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Changes to power supplies on a umockdev test bed, as fast as the test bed takes them, each
/// announced by a `change` uevent, each changing exactly one key's value (so each is one event
/// on the bus); the truth is what the last change set for each key.
///
/// The supplies: batteries `BAT0`…`BAT2` (capacity steps, and every fourth change of a battery the
/// next status) and the `AC` and `USB` adapters (online toggled).
struct UeventFlood: Sendable {
    /// The supplies and their first state.
    static let supplies: [(name: String, values: [String: String])] = [
        ("BAT0", ["type": "Battery", "status": "Discharging", "capacity": "80", "present": "1"]),
        ("BAT1", ["type": "Battery", "status": "Charging", "capacity": "40", "present": "1"]),
        ("BAT2", ["type": "Battery", "status": "Full", "capacity": "100", "present": "1"]),
        ("AC", ["type": "Mains", "online": "0"]),
        ("USB", ["type": "USB", "online": "1"]),
    ]

    private static let statuses: [(status: String, state: String)] = [
        ("Charging", "charging"), ("Discharging", "unplugged"), ("Full", "full"), ("Not charging", "not-charging"),
    ]

    /// What a run sent.
    struct Result: Sendable {
        /// Changes made (each one uevent and one event).
        var changes = 0
        /// The value each key was last given, and how many changes it had.
        var truth: [String: JSONValue] = [:]
        var counts: [String: Int] = [:]
        /// Why it stopped early, if it did.
        var failure: String?
    }

    /// Plugs the supplies in.
    static func plug(into testbed: Testbed) throws {
        for supply in supplies {
            var properties = ["POWER_SUPPLY_NAME": supply.name]
            for (attribute, value) in supply.values { properties["POWER_SUPPLY_" + attribute.uppercased()] = value }
            try testbed.add(supply.name, attributes: supply.values, properties: properties)
        }
    }

    let testbed: Testbed
    let tail: RecordingTail
    /// The most changes the bus may lag behind before the flood waits. umockdev delivers a
    /// uevent as a datagram on a Unix socket, which queues at most `net.unix.max_dgram_qlen`
    /// (10 by default); past that its sender fails (EAGAIN) instead of the receiver seeing the
    /// overflow as a kernel netlink socket would: keep this well below 10.
    let window: Int
    /// The most changes to make.
    let limit: Int
    /// The most changes a second (the flood shares the machine with the rest of the tests).
    let rate: Int

    /// Changes supplies until `deadline` (or `limit` changes), at most `rate` a second, waiting
    /// whenever the recording is more than `window` changes behind. Blocks: run it on a thread
    /// of its own.
    func run(until deadline: ContinuousClock.Instant) -> Result {
        var result = Result()
        var capacityStep = [Int](repeating: 0, count: Self.supplies.count)
        var status = Self.supplies.map { supply in Self.statuses.firstIndex { $0.status == supply.values["status"] } ?? 0 }
        var online = Self.supplies.map { $0.values["online"] == "1" }
        var round = 0
        let start = ContinuousClock.now
        while ContinuousClock.now < deadline, result.changes < limit {
            let index = round % Self.supplies.count
            let name = Self.supplies[index].name
            let key: String
            let value: JSONValue
            let attributes: [String: String]
            if name.hasPrefix("BAT") {
                if (round / Self.supplies.count) % 4 == 3 {
                    status[index] = (status[index] + 1) % Self.statuses.count
                    let next = Self.statuses[status[index]]
                    (key, value, attributes) = ("battery/\(name)/state", .string(next.state), ["status": next.status])
                } else {
                    // 1…99, never the same twice in a row (steps of 7 modulo 99); the first differs from the plugged-in capacity.
                    capacityStep[index] += 1
                    let capacity = 1 + (capacityStep[index] * 7 + index) % 99
                    let level = (try? JSONValue(parsing: "\(Double(capacity) / 100)")) ?? .null
                    (key, value, attributes) = ("battery/\(name)/level", level, ["capacity": "\(capacity)"])
                }
            } else {
                online[index].toggle()
                (key, value, attributes) = ("power/\(name)/online", .bool(online[index]), ["online": online[index] ? "1" : "0"])
            }
            do {
                try testbed.quickUpdate(name, attributes)
            } catch {
                result.failure = "the test bed failed: \(error)"
                return result
            }
            result.changes += 1
            result.truth[key] = value
            result.counts[key, default: 0] += 1
            round += 1
            if let failure = waitForBus(toReach: result.changes - window) {
                result.failure = failure
                return result
            }
            let ahead = start + .microseconds(result.changes * 1_000_000 / rate) - ContinuousClock.now
            if ahead > .zero {
                usleep(UInt32(ahead.components.seconds * 1_000_000 + ahead.components.attoseconds / 1_000_000_000_000))
            }
        }
        return result
    }

    /// Waits until the recording holds at least `count` power events; an explanation if it does
    /// not within `patience`.
    private func waitForBus(toReach count: Int) -> String? {
        guard count > 0, powerEvents() < count else { return nil }
        let deadline = ContinuousClock.now + patience
        while powerEvents() < count {
            guard ContinuousClock.now < deadline else {
                return "the bus saw \(powerEvents()) power events of at least \(count) within \(patience)"
            }
            usleep(2_000)
        }
        return nil
    }

    private func powerEvents() -> Int {
        let events = tail.poll()
        return events.total - events.count(prefix: "settings/")
    }
}
