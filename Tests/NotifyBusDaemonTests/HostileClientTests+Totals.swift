import DBus
import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// "Bounded totals" (specification: D-Bus interface) and "a subscribe/cancel loop leaves nothing behind".
extension HostileClientTests {
    /// Connections of this test process (one PID, so one application unless it runs in an app
    /// scope) subscribing `count` times each; each connection's answers (`nil`: accepted).
    func subscribeMany(_ connections: [RawBusConnection], _ counts: [Int]) async throws -> [[String?]] {
        try await onOwnThread {
            try zip(connections, counts).map { connection, count in
                try (0..<count).map { _ -> String? in
                    switch try connection.subscribe(["network/connectivity"]) {
                    case .success: nil
                    case .failure(let refusal): refusal.name
                    }
                }
            }
        }
    }

    /// Reads each connection's `Events` until every one of its `subscriptions` (paths) got a
    /// notification of `network/connectivity` = `value`; returns the paths that got none.
    func missing(_ value: String, on connections: [RawBusConnection], subscriptions: Int) async throws -> [String] {
        try await onOwnThread {
            var missing: [String] = []
            for connection in connections {
                var reached = Set<String>()
                let deadline = ContinuousClock.now + .seconds(10)
                while reached.count < subscriptions, let message = try connection.receive(timeout: deadline - .now) {
                    guard message.isEvents, let path = message.path else { continue }
                    if try message.elements().contains(where: { $0.key == "network/connectivity" && $0.value == value }) {
                        reached.insert(path)
                    }
                }
                if reached.count < subscriptions { missing.append("\(connection.uniqueName): \(reached.count) of \(subscriptions)") }
            }
            return missing
        }
    }

    @Test func subscriptionsAreBoundedPerConnectionAndPerProcess() async throws {
        let ownGroup = (readFile("/proc/self/cgroup") ?? "").split(separator: "\n").first { $0.hasPrefix("0::") } ?? ""
        let groupName = ownGroup.split(separator: "/").last ?? ""
        try #require(!(groupName.hasPrefix("app-") && groupName.hasSuffix(".scope")), "the test process runs in an app scope: \(ownGroup)")
        let bed = try await DaemonBed()
        let connections = try (0..<5).map { _ in try RawBusConnection(address: bed.session.address) }
        // Four connections of one process: 64 each, the 65th refused on each.
        let answers = try await subscribeMany(Array(connections.prefix(4)), [65, 65, 65, 65])
        for (index, connection) in answers.enumerated() {
            #expect(connection.prefix(64).allSatisfy { $0 == nil }, "connection \(index): \(connection.compactMap { $0 })")
            #expect(connection.last == Names.limitsExceeded, "the 65th on connection \(index)")
        }
        // A fifth connection of the same process: the 257th subscription of the application.
        let fifth = try await subscribeMany([connections[4]], [2])
        #expect(fifth == [[Names.limitsExceeded, Names.limitsExceeded]], "past 256 for one process: \(fifth)")
        // Another process is another application.
        let (other, _) = try bed.pythonClient(["network/connectivity"])
        // Nothing refused changed anything: all 256 and the other process get the next event.
        try await bed.setConnectivity(1)
        #expect(try await missing("\"none\"", on: Array(connections.prefix(4)), subscriptions: 64) == [])
        #expect(bed.lines(of: other, until: isNotification("network/connectivity", "none")) != nil)
        stop(other)
        #expect(!bed.daemon.hasExited)
    }

    @Test func maxSubscriptionsBoundsAllClientsTogether() async throws {
        let bed = try await DaemonBed(arguments: ["--max-subscriptions", "10"])
        let first = try RawBusConnection(address: bed.session.address)
        let second = try RawBusConnection(address: bed.session.address)
        let answers = try await subscribeMany([first, second], [11, 1])
        #expect(answers[0].prefix(10).allSatisfy { $0 == nil }, "\(answers[0])")
        #expect(answers[0].last == Names.limitsExceeded, "the 11th of 10 in all")
        #expect(answers[1] == [Names.limitsExceeded], "another connection past 10 in all")
        // One cancelled: room for one more, from anyone.
        let cancelled = try await onOwnThread { () -> Bool in
            let xml = try first.call(path: Names.busPath + "/subscription", interface: Names.introspectable, member: "Introspect")
            guard let node = childNodes(try xml.arguments().first?.stringValue ?? "").first else { return false }
            return try first.call(path: Names.busPath + "/subscription/" + node, interface: Names.subscription, member: "Cancel").errorName == nil
        }
        #expect(cancelled)
        #expect(try await subscribeMany([second], [2]) == [[nil, Names.limitsExceeded]])
        try await bed.setConnectivity(1)
        #expect(try await missing("\"none\"", on: [first], subscriptions: 9) == [])
        #expect(try await missing("\"none\"", on: [second], subscriptions: 1) == [])
    }

    /// 100,000 `Subscribe`/`Cancel` pairs, pipelined (a window of calls outstanding, each path
    /// cancelled once its `Subscribe` answered): nothing stays behind.
    @Test func aPipelinedSubscribeCancelLoopLeavesNothingBehind() async throws {
        let bed = try await DaemonBed()
        let pid = bed.daemon.pid
        let daemonName = try await bed.session.waitForOwner(of: "org.notifybus.Bus1")
        // One pair first, from a connection that then leaves: what the daemon sets up once is set up.
        try await onOwnThread {
            let warmUp = try RawBusConnection(address: bed.session.address)
            if case .success(let path) = try warmUp.subscribe(["network/**"]) {
                _ = try warmUp.call(path: path, interface: Names.subscription, member: "Cancel")
            }
            warmUp.disconnect()
        }
        try await Task.sleep(for: .milliseconds(300))
        let rules = try await matchRules(of: daemonName, on: bed)
        let before = await DaemonProcess.idleResidentBytes(of: pid)
        let descriptors = DaemonProcess.openDescriptors(of: pid)
        let looper = try RawBusConnection(address: bed.session.address)
        let started = ContinuousClock.now
        let failures = try await onOwnThread { try subscribeCancelLoop(looper, pairs: 100_000, window: 32) }
        measured("100,000 pipelined Subscribe/Cancel pairs in \(ContinuousClock.now - started)")
        #expect(failures.isEmpty, "\(failures.count) failed, e.g. \(failures.prefix(5))")
        #expect(try await subscriptionNodes(bed) == [])
        try await Task.sleep(for: .milliseconds(300))
        let after = await DaemonProcess.idleResidentBytes(of: pid)
        measured("resident before the loop \(mib(before)), after \(mib(after)); descriptors \(descriptors) → \(DaemonProcess.openDescriptors(of: pid))")
        #expect(after - before < 4 * mebibyte, "resident \(mib(before)) before the loop, \(mib(after)) after")
        #expect(DaemonProcess.openDescriptors(of: pid) <= descriptors)
        let rulesAfter = try await matchRules(of: daemonName, on: bed)
        measured("the daemon's match rules: \(rules) before the loop, \(rulesAfter) after")
        #expect(rulesAfter == rules)
        // Still serving: a new subscriber gets live events.
        let subscriber = try RawBusConnection(address: bed.session.address)
        _ = try await onOwnThread { try subscriber.subscribe(["network/connectivity"]) }
        try await bed.setConnectivity(1)
        #expect(try await missing("\"none\"", on: [subscriber], subscriptions: 1) == [])
        _ = looper
    }

    /// `MatchRules` of the daemon's connection, from dbus-daemon's statistics interface
    /// (Debian's dbus-daemon 1.14 has it).
    func matchRules(of name: String, on bed: DaemonBed) async throws -> UInt32 {
        try await onOwnThread {
            let client = try RawBusConnection(address: bed.session.address)
            let reply = try client.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus.Debug.Stats",
                member: "GetConnectionStats", arguments: [.string(name)])
            guard case .uint32(let rules)? = try reply.arguments().first?.stringKeyedDictionary?["MatchRules"]?.unwrapped else {
                throw HarnessError("GetConnectionStats: \(reply.errorName ?? "no MatchRules")")
            }
            return rules
        }
    }
}

/// `pairs` Subscribe/Cancel pairs on `connection`, at most `window` calls outstanding; each
/// subscription cancelled as soon as its `Subscribe` is answered. Returns the errors answered.
func subscribeCancelLoop(_ connection: RawBusConnection, pairs: Int, window: Int) throws -> [String] {
    enum Call { case subscribe, cancel }
    let (signature, body) = Wire.body([.strings(["network/**"]), .vardict([])])
    var outstanding: [UInt32: Call] = [:]
    var started = 0
    var finished = 0
    var failures: [String] = []
    while finished < pairs {
        while outstanding.count < window, started < pairs {
            let serial = try connection.send(path: Names.busPath, interface: Names.bus, member: "Subscribe", signature: signature, body: body)
            outstanding[serial] = .subscribe
            started += 1
        }
        guard let message = try connection.receive(timeout: .seconds(30)) else {
            throw HarnessError("no answer for 30 s after \(finished) pairs")
        }
        guard let serial = message.replySerial, let call = outstanding.removeValue(forKey: serial) else { continue }
        if let error = message.errorName {
            failures.append(error)
            finished += 1
            continue
        }
        switch call {
        case .subscribe:
            guard let path = message.firstString else { throw HarnessError("Subscribe answered no path") }
            outstanding[try connection.send(path: path, interface: Names.subscription, member: "Cancel")] = .cancel
        case .cancel:
            finished += 1
        }
    }
    return failures
}
