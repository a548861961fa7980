import DBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The 1 MiB bound on every signal and reply (specification: D-Bus interface, "Events"), with the portal Settings stand-in publishing
/// values of about 60 KB (`notifybusd --source settings` on the session bus), and the sources' 64 KiB
/// bound on one value.
extension HostileClientTests {
    static let signalBound = 1 << 20
    static let bigNamespace = "org.example.big"

    /// The bed with the settings source and python-dbusmock's portal stand-in (the fixture of
    /// DBusSourcesTests) on its session bus, once the daemon publishes the stand-in's settings.
    func settingsBed() async throws -> (bed: DaemonBed, portal: MockService) {
        let bed = try await DaemonBed(arguments: ["--source", "settings"])
        let portal = try await MockService(
            bus: bed.session, template: Paths.fixtures + "/../../DBusSourcesTests/Fixtures/portal.py",
            name: "org.freedesktop.portal.Desktop", parameters: #"{"version": 2}"#)
        let client = try RawBusConnection(address: bed.session.address)
        try #require(await eventually(timeout: .seconds(20)) {
            (try? await onOwnThread {
                try client.call(path: Names.busPath, interface: Names.bus, member: "GetValue", arguments: [.string("settings/org.gnome.desktop.interface/gtk-theme")]).firstString
            }) == "\"Adwaita\""
        }, "the settings source did not publish the stand-in's values")
        return (bed, portal)
    }

    /// Sets `key` of the big namespace through the stand-in (which emits `SettingChanged`).
    func setSetting(_ bed: DaemonBed, _ key: String, _ text: String) async throws {
        try await onOwnThread {
            let control = try RawBusConnection(address: bed.session.address)
            let reply = try control.call(
                destination: "org.freedesktop.portal.Desktop", path: "/org/freedesktop/portal/desktop",
                interface: "org.freedesktop.DBus.Mock", member: "SetSetting",
                arguments: [.string(Self.bigNamespace), .string(key), .variant(.string(text))])
            if let error = reply.errorName { throw HarnessError("SetSetting \(key): \(error)") }
        }
    }

    /// Reads `Events` until `count` notifications came; returns the signals.
    func signals(carrying count: Int, on client: RawBusConnection) async throws -> [WireMessage] {
        try await onOwnThread {
            var signals: [WireMessage] = []
            var notifications = 0
            let deadline = ContinuousClock.now + .seconds(20)
            while notifications < count, let message = try client.receive(timeout: deadline - .now) {
                guard message.isEvents else { continue }
                signals.append(message)
                notifications += try message.elements().filter { $0.type == "notification" }.count
            }
            return signals
        }
    }

    @Test func aFlushPastOneMebibyteComesInConsecutiveSignalsOfAtMostOneMebibyte() async throws {
        let (bed, portal) = try await settingsBed()
        let pattern = "settings/\(Self.bigNamespace)/**"
        let subscriber = try RawBusConnection(address: bed.session.address)
        let path = try await onOwnThread { try subscriber.subscribe([pattern], [("follow-freezer", .boolean(false))]).get() }
        _ = try await onOwnThread { try subscriber.call(path: path, interface: Names.subscription, member: "Suspend") }
        // 32 settings of 60,000 characters: about 1.9 MB of values held.
        let keys = (10..<42).map { "k\($0)" }
        for key in keys { try await setSetting(bed, key, key + String(repeating: "v", count: 60_000)) }
        let probe = try RawBusConnection(address: bed.session.address)
        #expect(await eventually(timeout: .seconds(20)) {
            (try? await onOwnThread {
                try probe.call(path: Names.busPath, interface: Names.bus, member: "GetValue", arguments: [.string("settings/\(Self.bigNamespace)/k41")]).firstString
            })?.hasPrefix("\"k41") == true
        })
        // A Snapshot of them would pass 1 MiB: refused.
        let snapshot = try await onOwnThread {
            try probe.call(path: Names.busPath, interface: Names.bus, member: "Snapshot", arguments: [.strings([pattern])])
        }
        #expect(snapshot.errorName == Names.limitsExceeded)
        #expect(snapshot.bytes.count <= Self.signalBound)

        _ = try await onOwnThread { try subscriber.call(path: path, interface: Names.subscription, member: "Resume") }
        let flush = try await signals(carrying: keys.count, on: subscriber)
        let elements = try flush.flatMap { try $0.elements() }
        measured("a flush of \(keys.count) values of 60 KB: \(flush.count) signals of \(flush.map(\.bytes.count)) bytes")
        #expect(flush.count >= 2)
        #expect(flush.allSatisfy { $0.bytes.count <= Self.signalBound }, "signal sizes \(flush.map(\.bytes.count))")
        let resumedAt = try #require(elements.firstIndex { $0.type == "resumed" })
        let flushed = elements[(resumedAt + 1)...].filter { $0.type == "notification" }
        #expect(elements[resumedAt]["flushed"]?.int64Value == Int64(flushed.count))
        #expect(Set(flushed.compactMap(\.key)) == Set(keys.map { "settings/\(Self.bigNamespace)/\($0)" }))
        let seqs = elements[resumedAt...].compactMap(\.seq)
        #expect(seqs.count == elements.count - resumedAt && zip(seqs, seqs.dropFirst()).allSatisfy { $1 == $0 + 1 }, "seq \(seqs)")

        // The initial values of a new subscription: the same bound.
        let newcomer = try RawBusConnection(address: bed.session.address)
        _ = try await onOwnThread { try newcomer.subscribe([pattern], [("initial", .string("current"))]).get() }
        let initial = try await signals(carrying: keys.count, on: newcomer)
        let initialElements = try initial.flatMap { try $0.elements() }
        measured("initial values of \(keys.count) keys of 60 KB: \(initial.count) signals of \(initial.map(\.bytes.count)) bytes")
        #expect(initial.count >= 2 && initial.allSatisfy { $0.bytes.count <= Self.signalBound }, "\(initial.map(\.bytes.count))")
        #expect(initialElements.compactMap(\.seq) == (1...UInt64(initialElements.count)).map { $0 })

        // A value over 64 KiB of JSON is not published at all; the next one is.
        try await setSetting(bed, "huge", String(repeating: "h", count: 70_000))
        try await setSetting(bed, "marker", "after")
        let live = try await onOwnThread { try subscriber.elements(until: { $0.key == "settings/\(Self.bigNamespace)/marker" }) }
        #expect(live?.contains { $0.key == "settings/\(Self.bigNamespace)/huge" } == false)
        let huge = try await onOwnThread {
            try probe.call(path: Names.busPath, interface: Names.bus, member: "GetValue", arguments: [.string("settings/\(Self.bigNamespace)/huge")]).errorName
        }
        #expect(huge == "org.notifybus.Error.UnknownKey")
        withExtendedLifetime(portal) {}
    }
}
