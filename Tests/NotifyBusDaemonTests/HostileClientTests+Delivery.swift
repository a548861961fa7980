import DBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The delivery (specification: D-Bus interface, "Events") that cannot be silently wrong: `seq` on every element, a notification's
/// `kind`, `first` and `last`, `Resync`; and the client that does not read ("Broken and hostile clients").
extension HostileClientTests {
    /// Checks what every element carries and returns them: `seq` consecutive from `first`
    /// across signals, `t` and `time`; a notification's `kind`, `first` and `last`.
    func expectWellFormed(_ elements: [[String: DBusValue]], from first: UInt64, _ context: String) {
        let seqs = elements.map(\.seq)
        #expect(seqs == (0..<elements.count).map { first + UInt64($0) }, "seq \(context): \(seqs)")
        for element in elements {
            #expect(element["t"]?.doubleValue != nil && element["time"]?.stringValue != nil, "\(context): \(element)")
            guard element.type == "notification" else { continue }
            #expect(element["kind"]?.stringValue != nil, "no kind \(context): \(element)")
            #expect(element["first"]?.doubleValue != nil && element["last"]?.doubleValue != nil, "no first/last \(context): \(element)")
            if (element.coalesced ?? 0) <= 1 {
                #expect(element["first"] == element["last"], "first ≠ last for one event \(context): \(element)")
            }
        }
    }

    @Test func everyElementCarriesSeqAndEveryNotificationItsKindAndResyncResends() async throws {
        let bed = try await DaemonBed()
        let client = try RawBusConnection(address: bed.session.address)
        let path = try await onOwnThread {
            try client.subscribe(["network/**"], [("initial", .string("current")), ("follow-freezer", .boolean(false))]).get()
        }
        func call(_ member: String) async throws {
            let error = try await onOwnThread { try client.call(path: path, interface: Names.subscription, member: member).errorName }
            #expect(error == nil, "\(member): \(error ?? "")")
        }
        func until(_ predicate: @escaping @Sendable ([String: DBusValue]) -> Bool) async throws -> [[String: DBusValue]] {
            try #require(try await onOwnThread { try client.elements(until: predicate) })
        }
        func untilAll(_ predicate: @escaping @Sendable ([[String: DBusValue]]) -> Bool) async throws -> [[String: DBusValue]] {
            try #require(try await onOwnThread { try client.elements(untilAll: predicate) })
        }
        let keys: Set<String> = ["network/connectivity", "network/metered"]
        var all: [[String: DBusValue]] = []
        // Initial values, then one live event.
        let initial = try await untilAll { $0.count == 2 }
        #expect(initial.allSatisfy { $0.type == "notification" && $0["kind"]?.stringValue == "initial" && $0.coalesced == 0 })
        try await bed.setConnectivity(1)
        let live = try await until { $0.value == "\"none\"" }
        #expect(live.last?["kind"]?.stringValue == "live" && live.last?.coalesced == 1)
        all += initial + live
        // Suspended across two changes: one flushed notification of both, first < last.
        try await call("Suspend")
        all += try await until { $0.type == "suspended" }
        try await bed.setConnectivity(3)
        try await Task.sleep(for: .milliseconds(50))
        try await bed.setConnectivity(2)
        try await Task.sleep(for: .milliseconds(300))
        try await call("Resume")
        let flush = try await until { $0.value == "\"portal\"" }
        #expect(flush.map(\.type) == ["resumed", "notification"])
        #expect(flush.first?["flushed"]?.int64Value == 1)
        #expect(flush.last?["kind"]?.stringValue == "flushed" && flush.last?.coalesced == 2)
        if let first = flush.last?["first"]?.doubleValue, let last = flush.last?["last"]?.doubleValue {
            #expect(first < last, "first \(first), last \(last)")
        }
        all += flush
        // Resync: `resync` (requested), then every current value, coalesced 0.
        try await call("Resync")
        let resync = try await untilAll(resyncCompletes(keys))
        #expect(resync.first?.type == "resync" && resync.first?["reason"]?.stringValue == "requested")
        #expect(Set(resync.dropFirst().compactMap(\.key)) == ["network/connectivity", "network/metered"])
        #expect(resync.dropFirst().allSatisfy { $0["kind"]?.stringValue == "resync" && $0.coalesced == 0 })
        #expect(resync.contains { $0.key == "network/connectivity" && $0.value == "\"portal\"" })
        all += resync
        // Resync while suspended: the same, on resume.
        try await call("Suspend")
        all += try await until { $0.type == "suspended" }
        try await call("Resync")
        try await bed.setConnectivity(4)
        try await Task.sleep(for: .milliseconds(300))
        try await call("Resume")
        let resumed = try await untilAll(resyncCompletes(keys))
        #expect(resumed.first?.type == "resumed")
        let resyncAt = try #require(resumed.firstIndex { $0.type == "resync" })
        #expect(resumed[resyncAt]["reason"]?.stringValue == "requested")
        #expect(resumed[resyncAt...].contains { $0.key == "network/connectivity" && $0.value == "\"full\"" && $0.coalesced == 0 })
        all += resumed
        expectWellFormed(all, from: 1, "across the subscription's signals")
    }

    /// A client that never reads while 1,500 events are published: the bus (its queue for one
    /// client held to 64 KiB here) drops what it cannot queue; the daemon stays up and bounded,
    /// and the client, reading again, sees the gap in `seq` and after `Resync` has every value.
    @Test func aClientThatDoesNotReadCostsNothingAndResyncsAfterAGap() async throws {
        let bed = try await DaemonBed(sessionLimits: ["max_outgoing_bytes": 65_536])
        let pid = bed.daemon.pid
        let idle = await DaemonProcess.idleResidentBytes(of: pid)
        let sleeper = try RawBusConnection(address: bed.session.address)
        let path = try await onOwnThread { try sleeper.subscribe(["network/**"], [("follow-freezer", .boolean(false))]).get() }
        let published = 1500
        try await onOwnThread {
            let control = try RawBusConnection(address: bed.system.address)
            for index in 0..<published {
                _ = try control.call(
                    destination: "org.freedesktop.NetworkManager", path: "/org/freedesktop", interface: "org.freedesktop.DBus.Mock",
                    member: "SetConnectivity", arguments: [.uint32(index % 2 == 0 ? 1 : 4)])
            }
        }
        // The daemon has the last value (a well-behaved client asks).
        let reader = try RawBusConnection(address: bed.session.address)
        #expect(await eventually(timeout: .seconds(20)) {
            let value = try? await onOwnThread {
                try reader.call(path: Names.busPath, interface: Names.bus, member: "GetValue", arguments: [.string("network/connectivity")]).firstString
            }
            return value == "\"full\""
        })
        let peak = DaemonProcess.peakResidentBytes(of: pid)
        #expect(!bed.daemon.hasExited)
        #expect(peak <= idle + Self.allowance, "peak \(mib(peak)), idle \(mib(idle))")
        // Reading again: what the bus kept, in order, then a gap.
        let kept = try await onOwnThread { () -> [[String: DBusValue]] in
            var elements: [[String: DBusValue]] = []
            while let message = try sleeper.receive(timeout: .milliseconds(500)) {
                if message.isEvents { elements += try message.elements() }
            }
            return elements
        }
        let seqs = kept.compactMap(\.seq)
        measured("a client that did not read during \(published) events got \(kept.count) elements, seq \(seqs.first ?? 0)…\(seqs.last ?? 0); peak \(mib(peak)), idle \(mib(idle))")
        #expect(seqs.count == kept.count && !seqs.isEmpty, "elements without seq")
        #expect(zip(seqs, seqs.dropFirst()).allSatisfy { $0 < $1 }, "seq not increasing")
        let gap = zip(seqs, seqs.dropFirst()).contains { $1 != $0 + 1 } || (seqs.last ?? 0) < UInt64(published)
        #expect(gap, "the bus could not keep \(published) events for a client that did not read, yet no seq is missing")
        // Resync: every current value.
        let resync = try await onOwnThread { () -> [[String: DBusValue]]? in
            _ = try sleeper.call(path: path, interface: Names.subscription, member: "Resync")
            return try sleeper.elements(untilAll: resyncCompletes(["network/connectivity", "network/metered"]))
        }
        let after = try #require(resync, "no resync values")
        let start = try #require(after.firstIndex { $0.type == "resync" })
        #expect(after[start]["reason"]?.stringValue == "requested")
        #expect(after[start...].contains { $0.key == "network/connectivity" && $0.value == "\"full\"" && $0.coalesced == 0 })
        #expect(after[start...].contains { $0.key == "network/metered" && $0.value == "false" })
        #expect((after[start].seq ?? 0) > (seqs.last ?? .max))
    }
}
