import DBus
import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

let busName: BusName = "org.notifybus.Bus1"
let busPath: ObjectPath = "/org/notifybus/Bus1"
let busInterface: InterfaceName = "org.notifybus.Bus1"
let subscriptionInterface: InterfaceName = "org.notifybus.Subscription1"

extension JSONValue {
    var type: String? { if case .string(let s)? = self["type"] { return s } else { return nil } }
}

/// Ends a client with SIGTERM (it cancels its subscription) and reaps it.
func stop(_ client: ChildProcess) {
    kill(client.pid, SIGTERM)
    client.waitForExit(timeout: .seconds(5))
}

func isNotification(_ key: String, _ value: JSONValue) -> (JSONValue) -> Bool {
    { $0.type == "notification" && $0["key"] == .string(key) && $0["value"] == value }
}

/// notifybusd in a child process on a private session bus, with the Python/Gio example client
/// and connections of the test's own as its clients.
@Suite("notifybusd over D-Bus", .serialized)
struct DaemonServiceTests {
    @Test func subscribeLiveSuspendResumeAndInitialValues() async throws {
        let bed = try await DaemonBed()
        let (client, path) = try bed.pythonClient(["network/**", "--initial"])
        #expect(path.hasPrefix("/org/notifybus/Bus1/subscription/"))
        // The current values first, coalesced 0.
        let initial = try #require(bed.lines(of: client, until: isNotification("network/connectivity", "full")))
        #expect(initial.last?["coalesced"] == 0)
        #expect(initial.last?["subscriber"] == .string(path))
        #expect(initial.last?["previous"] == nil)

        try await bed.setConnectivity(1)
        let live = try #require(bed.lines(of: client, until: isNotification("network/connectivity", "none")))
        #expect(live.last?["coalesced"] == 1)
        #expect(live.last?["previous"] == "full")

        kill(client.pid, SIGUSR1)
        #expect(bed.lines(of: client, until: { $0.type == "suspended" }) != nil)
        for state: UInt32 in [2, 3, 2] { try await bed.setConnectivity(state) }
        try await Task.sleep(for: .milliseconds(300))
        kill(client.pid, SIGUSR2)
        let flush = try #require(bed.lines(of: client, until: isNotification("network/connectivity", "portal")))
        let resumed = try #require(flush.first { $0.type == "resumed" })
        #expect(resumed["flushed"] == 1)
        #expect(flush.filter { $0.type == "notification" }.count == 1)
        #expect(flush.last?["coalesced"] == 3)
        #expect(flush.last?["previous"] == "none")
        // Times: `t` a number, `time` RFC 3339.
        if case .string(let time)? = flush.last?["time"] { #expect(time.count >= 20 && time.contains("T")) } else {
            Issue.record("no time")
        }
        stop(client)
    }

    /// One change reaches every subscription to its key, each signal from that subscription's own
    /// object path to its own owner (the daemon marshals the signal once and copies it for each).
    @Test func oneChangeReachesEverySubscriptionFromItsOwnPath() async throws {
        let bed = try await DaemonBed()
        let (first, firstPath) = try bed.pythonClient(["network/**"])
        let (second, secondPath) = try bed.pythonClient(["network/**"])
        #expect(firstPath != secondPath)
        try await bed.setConnectivity(1)
        for (client, path) in [(first, firstPath), (second, secondPath)] {
            let live = try #require(bed.lines(of: client, until: isNotification("network/connectivity", "none")))
            #expect(live.last?["subscriber"] == .string(path))
            #expect(live.last?["coalesced"] == 1)
        }
        try await bed.setConnectivity(2)
        for (client, path) in [(first, firstPath), (second, secondPath)] {
            let live = try #require(bed.lines(of: client, until: isNotification("network/connectivity", "portal")))
            #expect(live.last?["subscriber"] == .string(path))
            #expect(live.last?["previous"] == "none")
        }
        stop(first)
        stop(second)
    }

    @Test func onlyTheOwnerMayTouchASubscription() async throws {
        let bed = try await DaemonBed()
        let (client, path) = try bed.pythonClient(["network/connectivity"])
        let other = try DBusClient(address: bed.session.dbusAddress)
        try await other.waitUntilConnected()
        let objectPath = try ObjectPath(validating: path)
        for member: MemberName in ["Suspend", "Resume", "Cancel"] {
            do {
                _ = try await other.call(destination: busName, path: objectPath, interface: subscriptionInterface, member: member)
                Issue.record("\(member) from another connection was accepted")
            } catch {
                #expect(error.name == "org.freedesktop.DBus.Error.AccessDenied")
            }
        }
        do {
            _ = try await other.property(destination: busName, path: objectPath, interface: subscriptionInterface, name: "State")
            Issue.record("State was readable by another connection")
        } catch {
            #expect(error.name == "org.freedesktop.DBus.Error.AccessDenied")
        }
        // Introspection is open; the bus object too.
        let xml = try await other.call(destination: busName, path: objectPath, interface: "org.freedesktop.DBus.Introspectable", member: "Introspect")
        #expect(xml.first?.stringValue?.contains("org.notifybus.Subscription1") == true)
        let version = try await other.property(destination: busName, path: busPath, interface: busInterface, name: "Version")
        #expect(version == .uint32(2))
        // The subscription is untouched: live events still arrive.
        try await bed.setConnectivity(2)
        #expect(bed.lines(of: client, until: isNotification("network/connectivity", "portal")) != nil)
        // Its owner killed: the object goes.
        kill(client.pid, SIGKILL)
        client.waitForExit(timeout: .seconds(5))
        #expect(await eventually(timeout: .seconds(10)) {
            do {
                _ = try await other.call(destination: busName, path: objectPath, interface: "org.freedesktop.DBus.Introspectable", member: "Introspect")
                return false
            } catch {
                return (error as? DBusError)?.name == "org.freedesktop.DBus.Error.UnknownObject"
            }
        })
        await other.close()
    }

    @Test func limitsAndMalformedCallsAreRefusedAndChangeNothing() async throws {
        let bed = try await DaemonBed()
        let (client, _) = try bed.pythonClient(["network/connectivity"])
        let caller = try DBusClient(address: bed.session.dbusAddress)
        try await caller.waitUntilConnected()
        func subscribe(_ patterns: [String], _ options: [(String, DBusValue)] = []) async -> Result<[DBusValue], DBusError> {
            do {
                return .success(try await caller.call(
                    destination: busName, path: busPath, interface: busInterface, member: "Subscribe",
                    arguments: [.strings(patterns), .vardict(options)]))
            } catch {
                return .failure(error)
            }
        }
        func errorName(_ result: Result<[DBusValue], DBusError>) -> String? {
            if case .failure(let error) = result { return error.name } else { return nil }
        }
        func message(_ result: Result<[DBusValue], DBusError>) -> String {
            if case .failure(let error) = result { return error.message } else { return "" }
        }
        let limitAsInt = await subscribe([], [("limit", .int32(5))])
        #expect(errorName(limitAsInt) == "org.freedesktop.DBus.Error.InvalidArgs")
        #expect(message(limitAsInt).contains("limit"))
        #expect(errorName(await subscribe([], [("limit", .uint32(0))])) == "org.freedesktop.DBus.Error.InvalidArgs")
        #expect(errorName(await subscribe([], [("limit", .uint32(65_537))])) == "org.freedesktop.DBus.Error.InvalidArgs")
        let unknown = await subscribe([], [("colour", .string("red"))])
        #expect(errorName(unknown) == "org.freedesktop.DBus.Error.InvalidArgs")
        #expect(message(unknown).contains("colour"))
        #expect(errorName(await subscribe([], [("policy", .string("newest"))])) == "org.freedesktop.DBus.Error.InvalidArgs")
        #expect(errorName(await subscribe(Array(repeating: "a", count: 65))) == "org.notifybus.Error.LimitsExceeded")
        #expect(errorName(await subscribe([String(repeating: "k", count: 1025)])) == "org.notifybus.Error.LimitsExceeded")
        for _ in 0..<64 { #expect(errorName(await subscribe(["x"])) == nil) }
        #expect(errorName(await subscribe(["x"])) == "org.notifybus.Error.LimitsExceeded")
        do {
            _ = try await caller.call(destination: busName, path: busPath, interface: busInterface, member: "Subscribe", arguments: [.int32(1)])
            Issue.record("a wrong signature was accepted")
        } catch {
            #expect(error.name == "org.freedesktop.DBus.Error.InvalidArgs")
        }
        do {
            _ = try await caller.call(destination: busName, path: busPath, interface: busInterface, member: "GetValue", arguments: [.string("no/such/key")])
            Issue.record("GetValue of a missing key answered")
        } catch {
            #expect(error.name == "org.notifybus.Error.UnknownKey")
        }
        let snapshot = try await caller.call(destination: busName, path: busPath, interface: busInterface, member: "Snapshot", arguments: [.strings([])])
        #expect(snapshot.first?.arrayElements?.isEmpty == false)

        // A few thousand random calls: the daemon keeps running, the client's subscription intact.
        var generator = SystemRandomNumberGenerator()
        let members: [MemberName] = ["Subscribe", "GetValue", "Snapshot", "Suspend", "Resume", "Cancel", "Get", "GetAll", "Set", "Introspect", "Nope"]
        let interfaces: [InterfaceName?] = [busInterface, subscriptionInterface, "org.freedesktop.DBus.Properties", "org.freedesktop.DBus.Introspectable", nil, "org.example.None"]
        let paths: [ObjectPath] = [busPath, "/org/notifybus/Bus1/subscription/1", "/org/notifybus/Bus1/subscription/99999", "/", "/org/notifybus"]
        for round in 0..<2000 {
            let arguments = (0..<Int.random(in: 0...3, using: &generator)).map { _ in randomValue(&generator, depth: 0) }
            caller.send(
                destination: busName, path: paths.randomElement(using: &generator)!,
                interface: interfaces.randomElement(using: &generator)!, member: members.randomElement(using: &generator)!,
                arguments: arguments)
            if round % 100 == 99 { _ = try await caller.call(destination: busName, path: busPath, interface: "org.freedesktop.DBus.Peer", member: "Ping") }
        }
        _ = try await caller.call(destination: busName, path: busPath, interface: "org.freedesktop.DBus.Peer", member: "Ping")
        #expect(!bed.daemon.hasExited)
        try await bed.setConnectivity(3)
        #expect(bed.lines(of: client, until: isNotification("network/connectivity", "limited")) != nil)
        await caller.close()
        stop(client)
    }

    @Test func theNameIsOwnedOnceAndSIGTERMExitsZero() async throws {
        let bed = try await DaemonBed()
        let second = try ChildProcess(
            Paths.notifybusd,
            ["--session-bus", bed.session.address, "--system-bus", bed.system.address, "--source", "network"],
            environment: bed.session.environment(), log: "\(bed.session.directory)/second.log")
        #expect(await second.exit(within: .seconds(20)).flatMap(ChildProcess.exitStatus(ofWaitStatus:)) == 1)
        #expect(readFile("\(bed.session.directory)/second.log")?.contains("already owned") == true)
        #expect(bed.daemon.terminate(signal: SIGTERM, timeout: .seconds(10)).flatMap(ChildProcess.exitStatus(ofWaitStatus:)) == 0)
    }
}

/// A random D-Bus value of a few types, nested a little.
func randomValue(_ generator: inout SystemRandomNumberGenerator, depth: Int) -> DBusValue {
    switch Int.random(in: 0..<(depth > 1 ? 6 : 9), using: &generator) {
    case 0: return .string(String(repeating: "x", count: Int.random(in: 0...40, using: &generator)))
    case 1: return .uint32(UInt32.random(in: 0...70_000, using: &generator))
    case 2: return .int32(Int32.random(in: -5...5, using: &generator))
    case 3: return .boolean(Bool.random(using: &generator))
    case 4: return .double(Double.random(in: -1...1, using: &generator))
    case 5: return .objectPath("/org/notifybus/Bus1/subscription/\(Int.random(in: 1...5, using: &generator))")
    case 6: return .strings((0..<Int.random(in: 0...70, using: &generator)).map { "k\($0)" })
    case 7:
        let names = ["policy", "limit", "initial", "follow-freezer", "junk"]
        return .vardict((0..<Int.random(in: 0...3, using: &generator)).map { _ in
            (names.randomElement(using: &generator)!, randomValue(&generator, depth: depth + 1))
        })
    default: return .variant(randomValue(&generator, depth: depth + 1))
    }
}
