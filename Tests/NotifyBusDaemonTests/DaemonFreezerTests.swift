import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The daemon follows its subscribers' lives (specification: D-Bus interface, "Following the subscriber's life"): the Python client's process
/// frozen through a real cgroup v2 group (or its parent), or stopped with SIGSTOP.
@Suite("notifybusd and the freezer", .serialized)
struct DaemonFreezerTests {
    /// Changes the connectivity through `states` while the client cannot run, then lets it run
    /// and returns its lines up to the flush's notification of the last state.
    func holdAcross(
        _ bed: DaemonBed, _ client: ChildProcess, _ states: [(UInt32, JSONValue)],
        block: () throws -> Void, unblock: () throws -> Void
    ) async throws -> [JSONValue] {
        try block()
        for (state, _) in states {
            try await bed.setConnectivity(state)
            try await Task.sleep(for: .milliseconds(50))
        }
        try await Task.sleep(for: .milliseconds(300))
        try unblock()
        return try #require(bed.lines(of: client, until: isNotification("network/connectivity", states.last!.1)))
    }

    @Test(.enabled(if: FreezerEnvironment.testsRun)) func aFrozenClientGetsOneSignalWithTheFlushOnThaw() async throws {
        let cgroups = try freezerGroups()
        defer { cgroups.cleanUp() }
        let bed = try await DaemonBed()
        let group = try cgroups.make()
        let (client, _) = try bed.pythonClient(["network/connectivity"], in: cgroups.directory(group))
        let lines = try await holdAcross(
            bed, client, [(1, "none"), (2, "portal"), (3, "limited"), (2, "portal")],
            block: {
                try cgroups.setFrozen(group, true)
                #expect(eventuallySync { cgroups.isFrozen(group) })
            },
            unblock: { try cgroups.setFrozen(group, false) })
        try #require(lines.map(\.type) == ["suspended", "resumed", "notification"])
        #expect(lines[1]["flushed"] == 1)
        #expect(lines[2]["coalesced"] == 4)
        #expect(lines[2]["previous"] == nil)
        // Live again after the thaw.
        try await bed.setConnectivity(4)
        let live = try #require(bed.lines(of: client, until: isNotification("network/connectivity", "full")))
        #expect(live.count == 1 && live[0]["coalesced"] == 1)
        stop(client)
    }

    @Test(.enabled(if: FreezerEnvironment.testsRun)) func aFrozenParentGroupCounts() async throws {
        let cgroups = try freezerGroups()
        defer { cgroups.cleanUp() }
        let bed = try await DaemonBed()
        let parent = try cgroups.make()
        let child = try cgroups.make("leaf")
        let (client, _) = try bed.pythonClient(["network/connectivity"], in: cgroups.directory(child))
        let lines = try await holdAcross(
            bed, client, [(1, "none"), (3, "limited")],
            block: {
                try cgroups.setFrozen(parent, true)
                #expect(eventuallySync { cgroups.isFrozen(child) })
            },
            unblock: { try cgroups.setFrozen(parent, false) })
        try #require(lines.map(\.type) == ["suspended", "resumed", "notification"])
        #expect(lines[2]["coalesced"] == 2)
        stop(client)
    }

    @Test(.enabled(if: FreezerEnvironment.testsRun)) func anExplicitSuspendOutlastsAThaw() async throws {
        let cgroups = try freezerGroups()
        defer { cgroups.cleanUp() }
        let bed = try await DaemonBed()
        let group = try cgroups.make()
        let (client, _) = try bed.pythonClient(["network/connectivity"], in: cgroups.directory(group))
        kill(client.pid, SIGUSR1)
        #expect(bed.lines(of: client, until: { $0.type == "suspended" }) != nil)
        try cgroups.setFrozen(group, true)
        #expect(eventuallySync { cgroups.isFrozen(group) })
        try await bed.setConnectivity(1)
        try await bed.setConnectivity(2)
        try await Task.sleep(for: .milliseconds(300))
        try cgroups.setFrozen(group, false)
        // Still suspended: nothing arrives.
        #expect(bed.nextLine(of: client, timeout: .seconds(1)) == nil)
        kill(client.pid, SIGUSR2)
        let lines = try #require(bed.lines(of: client, until: isNotification("network/connectivity", "portal")))
        #expect(lines.map(\.type) == ["resumed", "notification"])
        #expect(lines[1]["coalesced"] == 2)
        stop(client)
    }

    @Test func aStoppedClientIsHeldForUntilItContinues() async throws {
        let bed = try await DaemonBed()
        let (client, _) = try bed.pythonClient(["network/connectivity"])
        kill(client.pid, SIGSTOP)
        for state: UInt32 in [1, 3, 1, 2] {
            try await bed.setConnectivity(state)
            try await Task.sleep(for: .milliseconds(100))
        }
        try await Task.sleep(for: .milliseconds(300))
        kill(client.pid, SIGCONT)
        let lines = try #require(bed.lines(of: client, until: isNotification("network/connectivity", "portal")))
        // The first event reveals the stop and is held with the rest: the client hears
        // `suspended`, then on continuing `resumed` and one flush of all four.
        #expect(lines.map(\.type) == ["suspended", "resumed", "notification"])
        #expect(lines.last?["coalesced"] == 4)
        stop(client)
    }

    @Test(.enabled(if: FreezerEnvironment.testsRun)) func aClientThatDoesNotFollowTheFreezerGetsEveryEventAfterTheThaw() async throws {
        let cgroups = try freezerGroups()
        defer { cgroups.cleanUp() }
        let bed = try await DaemonBed()
        let group = try cgroups.make()
        let (client, _) = try bed.pythonClient(["network/connectivity", "--no-follow-freezer"], in: cgroups.directory(group))
        let lines = try await holdAcross(
            bed, client, [(1, "none"), (2, "portal"), (3, "limited")],
            block: {
                try cgroups.setFrozen(group, true)
                #expect(eventuallySync { cgroups.isFrozen(group) })
            },
            unblock: { try cgroups.setFrozen(group, false) })
        #expect(lines.map(\.type) == ["notification", "notification", "notification"])
        stop(client)
    }
}

/// Polls `condition` for up to five seconds.
func eventuallySync(_ condition: () -> Bool) -> Bool {
    for _ in 0..<500 {
        if condition() { return true }
        usleep(10_000)
    }
    return false
}
