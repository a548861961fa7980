import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The stop rule (a stopped subscriber gets the `suspended` element and nothing else; specification: D-Bus interface), Ctrl-Z
/// under `notifywatch --daemon`, and a sandboxed app behind `xdg-dbus-proxy` frozen as one app scope.
extension HostileClientTests {
    /// Stops `client` with SIGSTOP, makes `states` changes, continues it; its lines up to the
    /// flushed value `last`.
    func acrossStop(_ bed: DaemonBed, _ client: ChildProcess, _ states: [UInt32], last: JSONValue) async throws -> [JSONValue] {
        kill(client.pid, SIGSTOP)
        #expect(await eventually(timeout: .seconds(5)) { DaemonProcess.isStopped(client.pid) })
        for state in states {
            try await bed.setConnectivity(state)
            try await Task.sleep(for: .milliseconds(50))
        }
        try await Task.sleep(for: .milliseconds(300))
        kill(client.pid, SIGCONT)
        return try #require(bed.lines(of: client, until: isNotification("network/connectivity", last)))
    }

    @Test func aStoppedSubscriberGetsSuspendedAndNothingElseUntilItContinues() async throws {
        let bed = try await DaemonBed()
        let (client, _) = try bed.pythonClient(["network/connectivity"])
        // One change while stopped: not sent live, but held and flushed.
        let one = try await acrossStop(bed, client, [1], last: "none")
        #expect(one.map(\.type) == ["suspended", "resumed", "notification"], "\(one)")
        #expect(one.first { $0.type == "resumed" }?["flushed"] == 1)
        #expect(one.last?["coalesced"] == 1)
        // Several: one flushed notification with their count.
        let several = try await acrossStop(bed, client, [3, 1, 2], last: "portal")
        #expect(several.map(\.type) == ["suspended", "resumed", "notification"], "\(several)")
        #expect(several.first { $0.type == "resumed" }?["flushed"] == 1)
        #expect(several.last?["coalesced"] == 3)
        // Live again.
        try await bed.setConnectivity(4)
        let live = try #require(bed.lines(of: client, until: isNotification("network/connectivity", "full")))
        #expect(live.count == 1 && live[0]["coalesced"] == 1)
        stop(client)
    }

    /// Ctrl-Z: notifywatch asks the daemon to suspend and prints `suspended` before it stops.
    @Test func notifywatchPrintsSuspendedBeforeCtrlZStopsIt() async throws {
        let bed = try await DaemonBed()
        let watch = try bed.notifywatch(["network/connectivity"])
        // Subscribed once it prints (its sources' lines come from the daemon after subscribing).
        #expect(bed.nextLine(of: watch) != nil)
        try await bed.setConnectivity(1)
        #expect(bed.lines(of: watch, until: isNotification("network/connectivity", "none")) != nil)
        kill(watch.pid, SIGTSTP)
        #expect(await eventually(timeout: .seconds(10)) { DaemonProcess.isStopped(watch.pid) })
        // Read while it is stopped: the line must already be out.
        let printed = bed.lines(of: watch, until: { $0.type == "suspended" }, timeout: .seconds(2))
        #expect(printed != nil, "notifywatch stopped without printing suspended")
        #expect(DaemonProcess.isStopped(watch.pid))
        try await bed.setConnectivity(2)
        kill(watch.pid, SIGCONT)
        let resumed = bed.lines(of: watch, until: isNotification("network/connectivity", "portal"))
        #expect(resumed?.contains { $0.type == "resumed" } == true, "\(resumed ?? [])")
        kill(watch.pid, SIGINT)
        watch.waitForExit(timeout: .seconds(5))
    }

    /// A Flatpak-like app: `xdg-dbus-proxy --filter --talk=org.notifybus.Bus1` in front of the
    /// session bus and the Python client behind it, both in one group named like an app scope.
    /// The daemon sees the proxy's process; freezing the group holds the app's notifications.
    @Test(.enabled(if: FreezerEnvironment.testsRun)) func aSandboxedAppBehindXdgDbusProxyIsHeldWhileFrozen() async throws {
        let cgroups = try freezerGroups()
        defer { cgroups.cleanUp() }
        let bed = try await DaemonBed()
        try cgroups.make()
        let scope = try cgroups.make("app-test-\(getpid()).scope")
        let directory = try cgroups.directory(scope)
        let socket = bed.session.directory + "/proxy_socket"
        let proxy = try ChildProcess(
            "/bin/sh",
            ["-c", "echo $$ > \"$1/cgroup.procs\" && exec /usr/bin/xdg-dbus-proxy \"$2\" \"$3\" --filter --talk=org.notifybus.Bus1",
             "sh", directory, bed.session.address, socket],
            environment: bed.session.environment(), log: bed.session.directory + "/xdg-dbus-proxy.log")
        try #require(await eventually(timeout: .seconds(10)) { access(socket, F_OK) == 0 }, "xdg-dbus-proxy made no socket")
        let (client, _) = try bed.pythonClient(["network/connectivity"], in: directory, address: "unix:path=\(socket)")
        try await bed.setConnectivity(1)
        #expect(bed.lines(of: client, until: isNotification("network/connectivity", "none")) != nil, "no live event through the proxy")
        try cgroups.setFrozen(scope, true)
        #expect(eventuallySync { cgroups.isFrozen(scope) })
        // The daemon learns of the freeze from cgroup.events (inotify wakes ~15 ms after it).
        try await Task.sleep(for: .milliseconds(200))
        for state: UInt32 in [3, 2] {
            try await bed.setConnectivity(state)
            try await Task.sleep(for: .milliseconds(50))
        }
        try await Task.sleep(for: .milliseconds(300))
        try cgroups.setFrozen(scope, false)
        let lines = try #require(bed.lines(of: client, until: isNotification("network/connectivity", "portal")))
        #expect(lines.map(\.type) == ["suspended", "resumed", "notification"], "\(lines)")
        #expect(lines.first { $0.type == "resumed" }?["flushed"] == 1)
        #expect(lines.last?["coalesced"] == 2)
        stop(client)
        withExtendedLifetime(proxy) {}
    }
}
