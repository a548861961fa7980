import DBus
import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `notifywatch --daemon`: the lines of the specification's notifywatch output, through notifybusd.
@Suite("notifywatch --daemon", .serialized)
struct NotifyWatchDaemonTests {
    @Test func printsSourcesCurrentValuesLiveChangesAndFlushes() async throws {
        let bed = try await DaemonBed()
        let watch = try bed.notifywatch(["network/connectivity"])
        let start = try #require(bed.lines(of: watch, until: isNotification("network/connectivity", "full")))
        #expect(start.first?.type == "source")
        #expect(start.first?["source"] == "network")
        #expect(start.first?["status"] == "running")
        #expect(start.last?["coalesced"] == 0)
        #expect(start.last?["subscriber"] == "notifywatch")
        try await bed.setConnectivity(1)
        let live = try #require(bed.lines(of: watch, until: isNotification("network/connectivity", "none")))
        #expect(live.count == 1 && live[0]["coalesced"] == 1 && live[0]["previous"] == "full")
        if case .string(let time)? = live[0]["time"] { #expect(time.contains("T")) } else { Issue.record("no time") }

        kill(watch.pid, SIGUSR1)
        #expect(bed.lines(of: watch, until: { $0.type == "suspended" }) != nil)
        try await bed.setConnectivity(2)
        try await bed.setConnectivity(3)
        try await Task.sleep(for: .milliseconds(300))
        kill(watch.pid, SIGUSR2)
        let flush = try #require(bed.lines(of: watch, until: isNotification("network/connectivity", "limited")))
        #expect(flush.map(\.type) == ["resumed", "notification"])
        #expect(flush[0]["flushed"] == 1)
        #expect(flush[1]["coalesced"] == 2)

        kill(watch.pid, SIGTERM)
        #expect(watch.waitForExit(timeout: .seconds(10)).flatMap(ChildProcess.exitStatus(ofWaitStatus:)) == 0)
    }

    @Test(.enabled(if: FreezerEnvironment.testsRun)) func aFrozenWatcherPrintsTheSuspensionAndTheFlushAfterTheThaw() async throws {
        let cgroups = try freezerGroups()
        defer { cgroups.cleanUp() }
        let bed = try await DaemonBed()
        let group = try cgroups.make()
        let watch = try bed.notifywatch(["network/connectivity"], in: cgroups.directory(group))
        #expect(bed.lines(of: watch, until: isNotification("network/connectivity", "full")) != nil)
        try cgroups.setFrozen(group, true)
        #expect(eventuallySync { cgroups.isFrozen(group) })
        for state: UInt32 in [1, 2, 1, 3] {
            try await bed.setConnectivity(state)
            try await Task.sleep(for: .milliseconds(50))
        }
        try await Task.sleep(for: .milliseconds(300))
        try cgroups.setFrozen(group, false)
        let lines = try #require(bed.lines(of: watch, until: isNotification("network/connectivity", "limited")))
        #expect(lines.map(\.type) == ["suspended", "resumed", "notification"])
        #expect(lines.last?["coalesced"] == 4)
        kill(watch.pid, SIGTERM)
        #expect(watch.waitForExit(timeout: .seconds(10)).flatMap(ChildProcess.exitStatus(ofWaitStatus:)) == 0)
    }

    /// Ctrl-Z prints `suspended` before the process stops, also after the daemon itself suspended
    /// the subscription once (the process stopped from outside and continued).
    @Test func ctrlZPrintsSuspendedFirstAfterAStopFromOutside() async throws {
        let bed = try await DaemonBed()
        let watch = try bed.notifywatch(["network/connectivity"])
        #expect(bed.lines(of: watch, until: isNotification("network/connectivity", "full")) != nil)
        kill(watch.pid, SIGSTOP)
        #expect(await eventually(timeout: .seconds(5)) { DaemonProcess.isStopped(watch.pid) })
        try await bed.setConnectivity(1)
        try await Task.sleep(for: .milliseconds(300))
        kill(watch.pid, SIGCONT)
        let across = try #require(bed.lines(of: watch, until: isNotification("network/connectivity", "none")))
        #expect(across.map(\.type) == ["suspended", "resumed", "notification"], "\(across)")

        kill(watch.pid, SIGTSTP)
        #expect(await eventually(timeout: .seconds(10)) { DaemonProcess.isStopped(watch.pid) })
        // Read while it is stopped: the line must already be out.
        let printed = bed.lines(of: watch, until: { $0.type == "suspended" }, timeout: .seconds(2))
        #expect(printed?.map(\.type) == ["suspended"], "notifywatch stopped without printing suspended")
        #expect(DaemonProcess.isStopped(watch.pid))
        try await bed.setConnectivity(2)
        kill(watch.pid, SIGCONT)
        let resumed = bed.lines(of: watch, until: isNotification("network/connectivity", "portal"))
        #expect(resumed?.map(\.type) == ["resumed", "notification"], "\(resumed ?? [])")
        kill(watch.pid, SIGTERM)
        #expect(watch.waitForExit(timeout: .seconds(10)).flatMap(ChildProcess.exitStatus(ofWaitStatus:)) == 0)
    }

    @Test func withoutADaemonItExits69() async throws {
        let bus = try PrivateBus(.session)
        let watch = try ChildProcess(
            executable: Paths.executable("notifywatch"), arguments: ["--daemon", "--json", "--session-bus", bus.address],
            environment: bus.environment(), standardError: .append("\(bus.directory)/notifywatch.log"))
        #expect(watch.waitForExit(timeout: .seconds(20)).flatMap(ChildProcess.exitStatus(ofWaitStatus:)) == 69)
        #expect(readFile("\(bus.directory)/notifywatch.log")?.contains("no notifybusd") == true)
    }

    @Test func theBusStartsTheDaemonThatAServiceFileNames() async throws {
        let bus = try PrivateBus(.session)
        try await bus.installService(name: "org.notifybus.Bus1", exec: "\(Paths.notifybusd) --source time")
        let watch = try ChildProcess(
            executable: Paths.executable("notifywatch"), arguments: ["--daemon", "--json", "--session-bus", bus.address],
            environment: bus.environment(), standardError: .append("\(bus.directory)/notifywatch.log"))
        let first = watch.readLine(timeout: .seconds(30)).flatMap { try? JSONValue(parsing: $0) }
        #expect(first?.type == "source" && first?["source"] == "time", "\(readFile("\(bus.directory)/notifywatch.log") ?? "")")
        kill(watch.pid, SIGTERM)
        #expect(watch.waitForExit(timeout: .seconds(10)).flatMap(ChildProcess.exitStatus(ofWaitStatus:)) == 0)

        let client = try DBusClient(address: bus.dbusAddress)
        try await client.waitUntilConnected()
        let owner = try await client.call(
            destination: .bus, path: .bus, interface: .bus, member: "GetNameOwner", arguments: [.string("org.notifybus.Bus1")])
        let pid = try await client.call(
            destination: .bus, path: .bus, interface: .bus, member: "GetConnectionUnixProcessID", arguments: owner)
        if case .uint32(let daemon)? = pid.first { kill(pid_t(daemon), SIGTERM) }
        try await bus.waitForNoOwner(of: "org.notifybus.Bus1")
        await client.close()
    }

    @Test func recordIsRefusedWithDaemon() async throws {
        let bus = try PrivateBus(.session)
        let watch = try ChildProcess(
            executable: Paths.executable("notifywatch"), arguments: ["--daemon", "--record", "/tmp/x.jsonl"],
            environment: bus.environment(), standardError: .append("\(bus.directory)/notifywatch.log"))
        let status = watch.waitForExit(timeout: .seconds(20)).flatMap(ChildProcess.exitStatus(ofWaitStatus:))
        #expect(status != nil && status != 0)
        #expect(readFile("\(bus.directory)/notifywatch.log")?.contains("--record") == true)
    }
}
