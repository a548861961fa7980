import DBus
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Match rules and peers on a private bus")
struct DBusMatchRuleBusTests {
    /// With the bus allowing 3 match rules per connection, the 4th and 5th `AddMatch` are
    /// refused, and the refusals are reported with their rules, without blocking the loop.
    @Test func aRefusedMatchRuleIsReported() async throws {
        let bus = try PrivateBus(
            .session, configuration: "<limit name=\"max_match_rules_per_connection\">3</limit>")
        let failures = Recorder<String>()
        let connection = try await LoopConnection(bus: bus) { connection in
            connection.onMatchRuleFailure { rule, error in failures.append("\(rule.member?.rawValue ?? "") \(error.name)") }
            for member: MemberName in ["One", "Two", "Three", "Four", "Five"] {
                connection.signals(matching: DBusMatchRule(interface: "org.notifybus.Rules", member: member)) { _ in }
            }
        }
        #expect(await failures.wait { $0.count == 2 })
        #expect(failures.all == ["Four \(DBusError.Name.limitsExceeded)", "Five \(DBusError.Name.limitsExceeded)"])

        // The client form reports them too.
        let client = try DBusClient(address: bus.dbusAddress)
        var refused = await client.matchRuleFailures().makeAsyncIterator()
        var streams: [AsyncStream<DBusSignal>] = []
        for member: MemberName in ["A", "B", "C", "D"] {
            streams.append(await client.signals(matching: DBusMatchRule(interface: "org.notifybus.Rules", member: member)))
        }
        let failure = try #require(await refused.next())
        #expect(failure.rule.member == "D" && failure.error.name == DBusError.Name.limitsExceeded)
        withExtendedLifetime(streams) {}
        await client.close()
        await connection.close()
    }

    /// One rule (`NameOwnerChanged` with `arg2=''`), accepted by dbus-daemon, reports every
    /// unique name that leaves, and not well-known names losing their owner.
    @Test func peersLeavingComeThroughOneRule() async throws {
        let bus = try PrivateBus(.session)
        let left = Recorder<BusName>()
        let failures = Recorder<String>()
        let watcher = try await LoopConnection(bus: bus) { connection in
            connection.onMatchRuleFailure { rule, error in failures.append("\(rule): \(error)") }
            connection.peersLeaving { left.append($0) }
        }
        _ = try await watcher.uniqueName()
        #expect(DBusConnection.peersLeavingRule.text
            == "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg2=''")
        // A round trip after the rule was sent: it was accepted (or refused) by then.
        _ = try await watcher.await { connection, done in
            connection.call(destination: .bus, path: .bus, interface: .bus, member: "GetId") { done($0) }
        }

        let first = try await LoopConnection(bus: bus)
        #expect(try await first.requestName("org.notifybus.Leaving") == .primaryOwner)
        let firstName = try await first.uniqueName()
        await first.close()
        let second = try await LoopConnection(bus: bus)
        let secondName = try await second.uniqueName()
        await second.close()
        #expect(await left.wait { $0.contains(secondName) })
        #expect(left.all == [firstName, secondName])
        #expect(failures.all.isEmpty)
        await watcher.close()
    }

    @Test func credentialsComeFromTheBus() async throws {
        let bus = try PrivateBus(.session)
        let server = try await LoopConnection(bus: bus)
        let client = try DBusClient(address: bus.dbusAddress)
        let clientName = try await client.waitUntilConnected()
        let credentials: DBusCredentials = try await server.await { connection, done in
            connection.credentials(of: clientName, reply: done)
        }
        #expect(credentials.processID == UInt32(getpid()))
        #expect(credentials.userID == getuid())
        // dbus-daemon 1.14 hands out no pidfd; a newer bus would, and it is only noted.
        print("GetConnectionCredentials: \(credentials)")
        do {
            let _: DBusCredentials = try await server.await { connection, done in
                connection.credentials(of: ":1.9999", reply: done)
            }
            Issue.record("credentials of a name that is not on the bus")
        } catch let error as DBusError {
            #expect(error.name == "org.freedesktop.DBus.Error.NameHasNoOwner")
        }
        await client.close()
        await server.close()
    }
}
