import DBus
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// "Responsiveness" (specification: D-Bus interface) under a flood, and its access rule against every kind of call.
extension HostileClientTests {
    @Test func anotherClientIsServedWithinBoundsDuringAFlood() async throws {
        let bed = try await DaemonBed()
        let pid = bed.daemon.pid
        let idle = await DaemonProcess.idleResidentBytes(of: pid)
        let subscriber = try RawBusConnection(address: bed.session.address)
        _ = try await onOwnThread { try subscriber.subscribe(["network/connectivity"], [("follow-freezer", .boolean(false))]) }
        let flood = try Flood(address: bed.session.address)
        while flood.answered < 500 { try await Task.sleep(for: .milliseconds(10)) }
        let probe = try VersionProbe(address: bed.session.address, interval: .milliseconds(20))
        // 100 live events, each timed from the change at NetworkManager's stand-in to its arrival.
        let events = try await onOwnThread { () -> [Duration] in
            let control = try RawBusConnection(address: bed.system.address)
            return try (0..<100).map { index -> Duration in
                let (state, value): (UInt32, String) = index % 2 == 0 ? (1, "\"none\"") : (4, "\"full\"")
                let started = ContinuousClock.now
                _ = try control.call(
                    destination: "org.freedesktop.NetworkManager", path: "/org/freedesktop", interface: "org.freedesktop.DBus.Mock",
                    member: "SetConnectivity", arguments: [.uint32(state)])
                let arrived = try subscriber.elements(until: { $0.key == "network/connectivity" && $0.value == value })
                usleep(20_000)
                return arrived == nil ? .seconds(10) : ContinuousClock.now - started - .milliseconds(20)
            }
        }
        // At least 100 answers of the probe, all during the flood.
        let deadline = ContinuousClock.now + .seconds(30)
        while probe.count < 100, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let samples = await probe.stop()
        let (sent, answered, errors) = await flood.stop()
        let peak = DaemonProcess.peakResidentBytes(of: pid)
        let versions = samples.map(\.latency)
        measured("flood: \(sent) calls sent, \(answered) answered (\(errors.sorted { $0.key < $1.key }))")
        measured("during the flood: Get Version p99 \(percentile(versions, 0.99)) of \(versions.count), slowest \(versions.max() ?? .zero); live events p99 \(percentile(events, 0.99)), slowest \(events.max() ?? .zero); peak \(mib(peak)), idle \(mib(idle))")
        #expect(versions.count >= 100)
        #expect(samples.allSatisfy { $0.version == 2 })
        #expect(percentile(versions, 0.99) <= Self.answerBound, "Get Version p99 during the flood")
        #expect(percentile(events, 0.99) <= Self.answerBound, "live events p99 during the flood")
        #expect(answered > 1000, "the flood was hardly answered: \(answered) calls")
        #expect(peak <= idle + Self.allowance + 2 * Flood.oversized, "peak \(mib(peak)), idle \(mib(idle))")
        #expect(!bed.daemon.hasExited)
    }

    /// Whatever a non-owner calls on a subscription (any member, interface or none, any
    /// signature, a 30 MB body), the answer is AccessDenied and nothing changes; Introspect and
    /// Peer stay open.
    @Test func aNonOwnerIsDeniedEveryMemberOfASubscription() async throws {
        let bed = try await DaemonBed()
        let idle = await DaemonProcess.idleResidentBytes(of: bed.daemon.pid)
        let owner = try RawBusConnection(address: bed.session.address)
        let path = try await onOwnThread { try owner.subscribe(["network/connectivity"]).get() }
        let other = try RawBusConnection(address: bed.session.address)
        let big = Wire.byteArray(count: 30_000_000)
        func body(_ values: DBusValue...) -> (String, [UInt8]) { Wire.body(values) }
        let calls: [(interface: String?, member: String, body: (String, [UInt8]))] = [
            (Names.subscription, "Suspend", ("", [])), (Names.subscription, "Resume", ("", [])),
            (Names.subscription, "Cancel", ("", [])), (Names.subscription, "Resync", ("", [])),
            (Names.subscription, "Suspend", body(.string("x"))), (Names.subscription, "Cancel", body(.uint32(7), .boolean(true))),
            (Names.subscription, "NoSuchMember", ("", [])), (Names.subscription, "Events", body(.array(elementSignature: "a{sv}", []))),
            (Names.properties, "Get", body(.string(Names.subscription), .string("State"))),
            (Names.properties, "GetAll", body(.string(Names.subscription))),
            (Names.properties, "Set", body(.string(Names.subscription), .string("State"), .variant(.string("suspended")))),
            (Names.properties, "Get", body(.string("org.example.None"), .string("X"))), (Names.properties, "Get", ("", [])),
            (Names.properties, "NoSuchMember", ("", [])),
            ("org.example.None", "Foo", ("", [])), (nil, "Suspend", ("", [])), (nil, "Cancel", ("", [])),
            (nil, "Whatever", body(.uint32(1))),
            (Names.subscription, "Cancel", ("ay", big)), (nil, "Cancel", ("ay", big)),
        ]
        let answers = try await onOwnThread {
            try calls.map { call in
                try other.call(
                    path: path, interface: call.interface, member: call.member, signature: call.body.0, body: call.body.1,
                    timeout: .seconds(120)
                ).errorName
            }
        }
        for (call, answer) in zip(calls, answers) {
            #expect(answer == Names.accessDenied, "\(call.interface ?? "(no interface)").\(call.member)(\(call.body.0)): \(answer ?? "a reply")")
        }
        let open = try await onOwnThread {
            try [
                other.call(path: path, interface: Names.introspectable, member: "Introspect"),
                other.call(path: path, interface: "org.freedesktop.DBus.Peer", member: "Ping"),
                other.call(path: path, interface: "org.freedesktop.DBus.Peer", member: "GetMachineId"),
            ].map(\.errorName)
        }
        #expect(open == [nil, nil, nil], "Introspect, Ping, GetMachineId: \(open)")
        // Nothing changed: the owner's subscription is active and gets live events.
        let state = try await onOwnThread {
            try owner.call(path: path, interface: Names.properties, member: "Get", arguments: [.string(Names.subscription), .string("State")])
                .arguments().first?.unwrapped.stringValue
        }
        #expect(state == "active")
        try await bed.setConnectivity(1)
        #expect(try await missing("\"none\"", on: [owner], subscriptions: 1) == [])
        expectPeak(of: bed, idle: idle, message: big.count, during: "30 MB calls of a non-owner")
    }
}

/// One connection flooding the daemon from a thread of its own with a mix of calls, a window of
/// 64 outstanding: valid Subscribe/Cancel pairs and GetValue, wrong signatures, bodies past 128
/// KiB, Snapshots of 64 patterns of 1024 bytes, calls to objects that do not exist.
final class Flood: Sendable {
    static let oversized = 200_000
    private struct Counts {
        var sent = 0
        var answered = 0
        var errors: [String: Int] = [:]
    }

    private let counts = Mutex(Counts())
    private let stopping = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)

    init(address: String) throws {
        let connection = try RawBusConnection(address: address)
        startThread { [self] in
            defer { finished.store(true, ordering: .releasing) }
            do { try run(connection) } catch { counts.withLock { $0.errors["flood: \(error)", default: 0] += 1 } }
        }
    }

    var answered: Int { counts.withLock { $0.answered } }

    /// Stops the flood; returns how many calls were sent and answered, and the errors by name.
    func stop() async -> (sent: Int, answered: Int, errors: [String: Int]) {
        stopping.store(true, ordering: .releasing)
        while !finished.load(ordering: .acquiring) { try? await Task.sleep(for: .milliseconds(5)) }
        return counts.withLock { ($0.sent, $0.answered, $0.errors) }
    }

    private func run(_ connection: RawBusConnection) throws {
        let subscribe = Wire.body([.strings(["network/**"]), .vardict([])])
        let wrongSignature = Wire.body([.string("network/**")])
        let oversized = Wire.body([.strings([String(repeating: "o", count: Self.oversized)]), .vardict([])])
        let atLimits = Wire.body([.strings((0..<64).map { String(repeating: "x/", count: 511) + "\(10 + $0)" })])
        let getValue = Wire.body([.string("network/connectivity")])
        var outstanding: [UInt32: Bool] = [:]  // serial → a Subscribe whose path is to be cancelled
        var round = 0
        while !stopping.load(ordering: .acquiring) {
            while outstanding.count < 64 {
                let serial: UInt32
                var isSubscribe = false
                switch round % 6 {
                case 0:
                    serial = try connection.send(path: Names.busPath, interface: Names.bus, member: "Subscribe", signature: subscribe.signature, body: subscribe.bytes)
                    isSubscribe = true
                case 1: serial = try connection.send(path: Names.busPath, interface: Names.bus, member: "Subscribe", signature: wrongSignature.signature, body: wrongSignature.bytes)
                case 2: serial = try connection.send(path: Names.busPath, interface: Names.bus, member: "Subscribe", signature: oversized.signature, body: oversized.bytes)
                case 3: serial = try connection.send(path: Names.busPath, interface: Names.bus, member: "Snapshot", signature: atLimits.signature, body: atLimits.bytes)
                case 4: serial = try connection.send(path: "/org/notifybus/Bus1/subscription/999999\(round)", interface: Names.subscription, member: "Cancel")
                default: serial = try connection.send(path: Names.busPath, interface: Names.bus, member: "GetValue", signature: getValue.signature, body: getValue.bytes)
                }
                outstanding[serial] = isSubscribe
                round += 1
                counts.withLock { $0.sent += 1 }
            }
            guard let message = try connection.receive(timeout: .seconds(30)) else { throw HarnessError("no answer for 30 s") }
            guard let serial = message.replySerial, let isSubscribe = outstanding.removeValue(forKey: serial) else { continue }
            counts.withLock { counts in
                counts.answered += 1
                if let name = message.errorName { counts.errors[name, default: 0] += 1 }
            }
            if isSubscribe, message.errorName == nil, let path = message.firstString {
                outstanding[try connection.send(path: path, interface: Names.subscription, member: "Cancel")] = false
                counts.withLock { $0.sent += 1 }
            }
        }
    }
}
