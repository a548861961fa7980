import DBus
import TestSupport
import Testing

/// One reading of a source reaches a subscriber of notifybusd as one `Events` signal.
@Suite("notifybusd: one change, one signal", .serialized)
struct DaemonBatchTests {
    /// NetworkManager changes `Connectivity` and `Metered` in one `PropertiesChanged`: the network
    /// source publishes both as one batch, at one time, and the subscriber gets one `Events`
    /// signal carrying both notifications, in the order of the signal, with the same time.
    @Test func onePropertiesChangedIsOneEventsSignal() async throws {
        let bed = try await DaemonBed()
        let subscriber = try RawBusConnection(address: bed.session.address)
        _ = try await onOwnThread { try subscriber.subscribe(["network/**"]).get() }
        _ = try await bed.control.call(
            destination: "org.freedesktop.NetworkManager", path: "/org/freedesktop/NetworkManager",
            interface: "org.freedesktop.DBus.Mock", member: "UpdateProperties",
            arguments: [
                .string("org.freedesktop.NetworkManager"),
                .vardict([("Connectivity", .uint32(1)), ("Metered", .uint32(1))]),
            ])
        let signals = try await onOwnThread { () -> [[[String: DBusValue]]] in
            // Every signal that comes within a second of the first.
            var signals = try subscriber.events(count: 1).map { try $0.elements() }
            while let message = try subscriber.receive(timeout: .seconds(1)) {
                if message.isEvents { signals.append(try message.elements()) }
            }
            return signals
        }
        #expect(signals.count == 1, "\(signals)")
        let keys = signals.first?.map { $0["key"]?.stringValue }
        #expect(keys == ["network/connectivity", "network/metered"])
        #expect(signals.first?.map { $0["kind"]?.stringValue } == ["live", "live"])
        // Published together: at one time.
        let times = signals.first?.map { element -> Double? in
            if case .double(let t)? = element["t"] { t } else { nil }
        } ?? []
        #expect(times.count == 2 && times[0] != nil && times[0] == times[1], "\(times)")
    }
}
