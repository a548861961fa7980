import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The delivery rules (specification: Delivery semantics) through the daemon, with the Python client: each policy, the limit and
/// its resync, the current values on subscribing.
@Suite("notifybusd: the delivery rules", .serialized)
struct DaemonPolicyTests {
    /// Suspends `client`, runs `changes`, resumes it, and returns its lines from `resumed` until
    /// one satisfies `last`.
    func suspendAround(
        _ bed: DaemonBed, _ client: ChildProcess, last: (JSONValue) -> Bool, _ changes: () async throws -> Void
    ) async throws -> [JSONValue] {
        kill(client.pid, SIGUSR1)
        #expect(bed.lines(of: client, until: { $0.type == "suspended" }) != nil)
        try await changes()
        try await Task.sleep(for: .milliseconds(300))
        kill(client.pid, SIGUSR2)
        let lines = bed.lines(of: client, until: last)
        return try #require(lines)
    }

    @Test func changedDropsANetZeroChange() async throws {
        let bed = try await DaemonBed()
        let (client, _) = try bed.pythonClient(["network/**", "--policy", "changed", "--initial"])
        // It has received the current values, so an A→B→A change is no change to it.
        #expect(bed.lines(of: client, until: isNotification("network/metered", false)) != nil)
        let lines = try await suspendAround(bed, client, last: { $0.type == "resumed" }) {
            try await bed.setConnectivity(1)
            try await bed.setConnectivity(4)
        }
        #expect(lines == [lines.last!])
        #expect(lines.last?["flushed"] == 0)
        // Nothing follows the resume; a real change afterwards does.
        try await bed.setMetered(1)
        let after = try #require(bed.lines(of: client, until: { $0.type == "notification" }))
        #expect(after.last?["key"] == "network/metered" && after.last?["value"] == true)
        stop(client)
    }

    @Test func allDeliversEveryHeldEventAndDropNone() async throws {
        let bed = try await DaemonBed()
        let (all, _) = try bed.pythonClient(["network/connectivity", "--policy", "all"])
        let (drop, _) = try bed.pythonClient(["network/connectivity", "--policy", "drop"])
        for client in [all, drop] { kill(client.pid, SIGUSR1) }
        for client in [all, drop] { #expect(bed.lines(of: client, until: { $0.type == "suspended" }) != nil) }
        for state: UInt32 in [1, 2, 3] { try await bed.setConnectivity(state) }
        try await Task.sleep(for: .milliseconds(300))
        for client in [all, drop] { kill(client.pid, SIGUSR2) }
        let every = try #require(bed.lines(of: all, until: isNotification("network/connectivity", "limited")))
        #expect(every.map(\.type) == ["resumed", "notification", "notification", "notification"])
        #expect(every[0]["flushed"] == 3)
        #expect(every.dropFirst().map { $0["value"] } == ["none", "portal", "limited"])
        #expect(every.dropFirst().allSatisfy { $0["coalesced"] == 1 })
        let dropped = try #require(bed.lines(of: drop, until: { $0.type == "resumed" }))
        #expect(dropped.last?["flushed"] == 0)
        #expect(bed.nextLine(of: drop, timeout: .milliseconds(500)) == nil)
        stop(all)
        stop(drop)
    }

    @Test func pastTheLimitAResyncBringsEveryCurrentValue() async throws {
        let bed = try await DaemonBed()
        let (client, _) = try bed.pythonClient(["network/**", "--limit", "1"])
        let lines = try await suspendAround(bed, client, last: isNotification("network/metered", true)) {
            try await bed.setConnectivity(2)
            try await bed.setMetered(1)
        }
        #expect(lines.map(\.type) == ["resumed", "resync", "notification", "notification"])
        #expect(lines[0]["flushed"] == 2)
        #expect(lines[1]["reason"] == "limit")
        #expect(lines[2]["key"] == "network/connectivity" && lines[2]["value"] == "portal")
        #expect(lines.dropFirst(2).allSatisfy { $0["coalesced"] == 0 })
        stop(client)
    }
}
