import DBus
import NotifyBus
import TestSupport

/// `SettingChanged` signals from the portal stand-in (DBusSourcesTests' Fixtures/portal.py under
/// python-dbusmock), sent in bursts: setting `k<i mod keys>` of namespace `org.notifybus.soak`
/// takes the value `i` (an `int32`), `i` counting up, so every signal changes its key's value
/// and is one event on the bus; the truth of each key is the last `i` sent for it.
///
/// A burst is one call of a method added to the mock at start (`AddMethod`), which sends the
/// signals itself: the signals leave in order, before the call's reply.
struct PortalFlood: Sendable {
    static let service: BusName = "org.freedesktop.portal.Desktop"
    static let path: ObjectPath = "/org/freedesktop/portal/desktop"
    static let namespace = "org.notifybus.soak"
    /// The interface of the burst method (only the mock has it).
    static let burstInterface: InterfaceName = "org.notifybus.SoakFlood"

    /// The mock's template.
    static let template: String = {
        let file = "\(#filePath)"
        let tests = String(file[..<(file.lastIndex(of: "/") ?? file.endIndex)].dropLast("/SoakTests".count))
        return tests + "/DBusSourcesTests/Fixtures/portal.py"
    }()

    /// Python run by the mock for `Burst(u start, u count, u keys)`.
    private static let burstCode = """
        import dbus
        import dbus.lowlevel
        start, count, keys = int(args[0]), int(args[1]), int(args[2])
        for i in range(start, start + count):
            message = dbus.lowlevel.SignalMessage('\(path)', 'org.freedesktop.portal.Settings', 'SettingChanged')
            message.append('\(namespace)', 'k%d' % (i % keys), dbus.Int32(i, variant_level=1), signature='ssv')
            for location in self.locations:
                location[0].send_message(message)
        """

    /// What a run sent.
    struct Result: Sendable {
        /// Signals sent (each one event).
        var signals = 0
        /// The value each key was last given, and how many signals it had.
        var truth: [String: JSONValue] = [:]
        var counts: [String: Int] = [:]
        /// Why it stopped early, if it did.
        var failure: String?
    }

    let client: DBusClient
    let tail: RecordingTail
    /// How many settings take turns.
    let keys: Int
    /// Signals per burst.
    let burst: Int
    /// The most signals the bus may lag behind before the flood waits.
    let window: Int
    /// The most signals to send.
    let limit: Int
    /// The most signals a second (the flood shares the machine with the rest of the tests).
    let rate: Int

    /// Adds the burst method to the running mock.
    static func prepare(_ client: DBusClient) async throws {
        _ = try await client.call(
            destination: service, path: path, interface: "org.freedesktop.DBus.Mock", member: "AddMethod",
            arguments: [.string(burstInterface.rawValue), .string("Burst"), .string("uuu"), .string(""), .string(burstCode)])
    }

    /// The key of setting `k<index>`.
    static func key(_ index: Int) -> String { "settings/\(namespace)/k\(index)" }

    /// Sends bursts until `deadline` (or `limit` signals), at most `rate` a second, waiting
    /// whenever the recording is more than `window` signals behind.
    func run(until deadline: ContinuousClock.Instant) async -> Result {
        var result = Result()
        let start = ContinuousClock.now
        while ContinuousClock.now < deadline, result.signals < limit {
            let count = min(burst, limit - result.signals)
            let first = result.signals
            do {
                _ = try await client.call(
                    destination: Self.service, path: Self.path, interface: Self.burstInterface, member: "Burst",
                    arguments: [.uint32(UInt32(first)), .uint32(UInt32(count)), .uint32(UInt32(keys))])
            } catch {
                result.failure = "Burst failed: \(error)"
                return result
            }
            for i in first..<(first + count) {
                result.truth[Self.key(i % keys)] = (try? JSONValue(parsing: String(i))) ?? .null
                result.counts[Self.key(i % keys), default: 0] += 1
            }
            result.signals += count
            if let failure = await waitForBus(toReach: result.signals - window) {
                result.failure = failure
                return result
            }
            let due = start + .milliseconds(result.signals * 1_000 / rate)
            if due > ContinuousClock.now { try? await Task.sleep(until: due) }
        }
        return result
    }

    private func waitForBus(toReach count: Int) async -> String? {
        let deadline = ContinuousClock.now + patience
        while tail.poll().count(prefix: "settings/\(Self.namespace)/") < count {
            guard ContinuousClock.now < deadline else {
                return "the bus saw \(tail.poll().count(prefix: "settings/")) settings events of at least \(count) within \(patience)"
            }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return nil
    }
}
