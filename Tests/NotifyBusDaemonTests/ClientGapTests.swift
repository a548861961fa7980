import DBus
import NotifyBus
@testable import NotifyBusClient
import NotifyBusProtocol
import SystemSupport
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A client that misses `Events` signals (the bus dropped them while it did not read) sees the gap
/// in `seq` and calls `Resync`, so it ends with every current value.
@Suite("Clients that miss signals resync", .serialized)
struct ClientGapTests {
    /// The Python example, stopped while it does not follow the freezer: the bus keeps only
    /// 64 KiB of signals for it, so most of 1,500 events are dropped; continued, it reads what the
    /// bus kept, sees the gap at the next event, calls Resync, and prints the `resync` line and
    /// the current value.
    @Test func thePythonExampleResyncsAfterAGap() async throws {
        let bed = try await DaemonBed(sessionLimits: ["max_outgoing_bytes": 65_536])
        let (client, _) = try bed.pythonClient(["network/connectivity", "--no-follow-freezer"])
        kill(client.pid, SIGSTOP)
        for index in 0..<1500 { try await bed.setConnectivity(index % 2 == 0 ? 1 : 3) }
        try await bed.setConnectivity(2)
        try await Task.sleep(for: .milliseconds(300))
        kill(client.pid, SIGCONT)
        // The next event shows the gap.
        try await Task.sleep(for: .milliseconds(500))
        try await bed.setConnectivity(4)
        let lines = try #require(bed.lines(of: client, until: { $0.type == "resync" }, timeout: .seconds(30)))
        #expect(lines.last?["reason"] == "requested")
        #expect(lines.filter { $0.type == "notification" }.count < 1500, "the bus dropped nothing")
        let value = try #require(bed.lines(of: client, until: isNotification("network/connectivity", "full")))
        #expect(value.last?["coalesced"] == 0 && value.last?["kind"] == "resync")
        stop(client)
    }

    /// The Swift client's router: consecutive elements pass, a gap asks for Resync, and the
    /// numbering goes on from the last element seen.
    @Test func theSwiftClientSeesAGapInSeq() throws {
        let router = Router()
        let path: ObjectPath = "/org/notifybus/Bus1/subscription/7"
        func decoded(_ seqs: ClosedRange<UInt64>) -> EventElements.Decoded {
            let events = seqs.map { _ in SubscriptionEvent.suspended(time: .zero) }
            return EventElements.decode(
                try! #require(EventElements.signalArguments(events, firstSeq: seqs.lowerBound, origin: WallTime(nanoseconds: 0)).first))
        }
        #expect(router.deliver(decoded(1...3), to: path) == false)
        #expect(router.deliver(decoded(4...4), to: path) == false)
        #expect(router.deliver(decoded(9...10), to: path) == true)
        #expect(router.deliver(decoded(11...12), to: path) == false)
        // Another subscription counts on its own, from 1.
        #expect(router.deliver(decoded(2...2), to: "/org/notifybus/Bus1/subscription/8") == true)
    }
}
