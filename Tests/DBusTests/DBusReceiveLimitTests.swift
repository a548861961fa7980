import DBus
import EpollLoop
import Synchronization
import TestSupport
import Testing

private let holderName: BusName = "org.notifybus.ReceiveLimitTest"
private let holderInterface: InterfaceName = "org.notifybus.Holder1"

/// The calls the handler keeps unanswered, on the server's loop.
private final class Unanswered {
    var calls: [DBusMethodCall] = []
}

private let unansweredKey = LoopLocalKey<Unanswered>()

@Suite("The bound on received messages on a private bus")
struct DBusReceiveLimitTests {
    /// With at most 64 KiB of received messages held, a server whose handler keeps 16 KiB calls
    /// unanswered still receives all of a flood of 40: a call waiting for its answer keeps where
    /// the answer goes, not its message, so it does not count against the bytes libdbus reads
    /// ahead (else a handler that waits for a reply of the bus could wait behind the calls it
    /// keeps, for ever). Answered later, every one gets its answer.
    @Test func callsKeptUnansweredDoNotStopTheReading() async throws {
        let bus = try PrivateBus(.session)
        let held = Mutex<[Int]>([])
        let server = try await LoopConnection(bus: bus, configuration: .init(maximumReceivedSize: 64 * 1024)) {
            connection, context in
            let unanswered = Unanswered()
            context[local: unansweredKey] = unanswered
            let holder = DBusInterface(name: holderInterface, methods: [
                DBusMethod(
                    "Hold", arguments: [.init("index", "u"), .init("payload", "ay")],
                    budget: DBusDecodingBudget(values: 20_000, depth: 1, stringBytes: 0)
                ) { call in
                    guard case .uint32(let index) = call.arguments[0] else { return }
                    held.withLock { $0.append(Int(index)) }
                    unanswered.calls.append(call)
                },
            ])
            try? connection.export(DBusObject(path: "/holder", interfaces: [holder]))
        }
        #expect(try await server.requestName(holderName) == .primaryOwner)
        let client = try DBusClient(address: bus.dbusAddress)
        try await client.waitUntilConnected()
        let answered = Recorder<Int>()
        let payload = DBusValue.array(elementSignature: "y", Array(repeating: .byte(1), count: 16 * 1024))
        for index in 0..<40 {
            client.send(
                destination: holderName, path: "/holder", interface: holderInterface, member: "Hold",
                arguments: [.uint32(UInt32(index)), payload]
            ) { result in if case .success = result { answered.append(index) } }
        }
        _ = await eventually(timeout: .seconds(20)) { held.withLock { $0.count } == 40 }
        let first = held.withLock { $0.count }
        #expect(first == 40, "\(first) calls of 16 KiB received under a 64 KiB bound while none was answered")
        #expect(answered.count == 0)

        // Answered now, each caller gets its answer.
        let deadline = ContinuousClock.now + .seconds(20)
        while answered.count < 40, ContinuousClock.now < deadline {
            try await server.runInContext { context in
                let calls = context[local: unansweredKey]?.calls ?? []
                context[local: unansweredKey]?.calls = []
                for call in calls { call.reply() }
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(answered.count == 40)
        #expect(held.withLock { $0 } == Array(0..<40))
        await client.close()
        await server.close()
    }
}
