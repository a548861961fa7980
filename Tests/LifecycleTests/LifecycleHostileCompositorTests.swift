import DBus
import Harness
import NotifyBus
import TestSupport
import Testing

/// notifybusd (the binary under test) against a compositor that lies: the tests' scripted server
/// (`FakeCompositor`) offering one window-list protocol with 1,000 windows, then sending what
/// libwayland cannot decode. The daemon keeps its bounds: the lifecycle source reports the
/// connection lost and connects again, the daemon goes on answering, its memory stays bounded,
/// and it exits cleanly.
@Suite(.serialized, .enabled(if: SwayBedEnvironment.testsRun)) struct LifecycleHostileCompositorTests {
    @Test(arguments: [("kde", "org_kde_plasma_window_management", UInt32(16)), ("wlr", "zwlr_foreign_toplevel_manager_v1", UInt32(3))])
    func thousandWindowsThenGarbageLeaveTheDaemonServing(backend: String, interface: String, version: UInt32) async throws {
        let scopes = try SwayBedEnvironment.appScopes()
        defer { scopes.remove() }
        let windows = (0..<1000).map { FakeCompositor.Window(appID: "org.example.App\($0)", flags: 0, pid: 1) }
        let compositor = try FakeCompositor(globals: [(1, "wl_seat", 7), (2, interface, version)], windows: windows)
        defer { compositor.stop() }
        let runtime = try makeTemporaryDirectory("lifecycle-hostile")
        defer { removeTree(runtime) }
        try writeFile(runtime + "/lifecycle.conf", "cgroup-root = \(scopes.root)\n")
        let bed = try await DaemonBed(
            arguments: ["--source", "lifecycle", "--freeze-background", "--toplevels", backend, "--freeze-config", runtime + "/lifecycle.conf"],
            environment: ["XDG_RUNTIME_DIR": runtime, "WAYLAND_DISPLAY": compositor.path, "SWAYSOCK": nil])
        let watcher = try bed.notifywatch(["app/**"])
        defer { watcher.terminate() }

        // Every window's app key, once the list is read.
        var keys = Set<String>()
        let listed = bed.lines(of: watcher, until: { line in
            if let key = line["key"]?.stringValue { keys.insert(key) }
            return keys.count == windows.count
        })
        #expect(listed != nil, "\(keys.count) of 1,000 app keys")
        let settled = ProcessStats.statusKiB("VmRSS", of: bed.daemon.pid)

        try await compositor.garbage()
        let lost = bed.lines(of: watcher, until: { $0["source"]?.stringValue == "lifecycle" && $0["status"]?.stringValue == "unavailable" })
        let reason = lost?.last?["reason"]?.stringValue ?? ""
        #expect(reason.contains("connection was lost"), "no lifecycle source lost after the garbage: \(reason)")
        // It connects again and reads the list anew.
        let back = bed.lines(of: watcher, until: { $0["source"]?.stringValue == "lifecycle" && $0["status"]?.stringValue == "running" })
        #expect(back != nil, "the lifecycle source did not come back")
        #expect(await eventually { compositor.binds.all.count == 2 }, "binds \(compositor.binds.all); notifybusd said: \(readFile(bed.log) ?? "")")

        // Still serving, promptly, and no larger for the attack.
        let client = try DBusClient(address: bed.session.dbusAddress)
        try await client.waitUntilConnected()
        var slowest = Duration.zero
        for _ in 0..<10 {
            let started = ContinuousClock.now
            _ = try await client.call(
                destination: "org.notifybus.Bus1", path: "/org/notifybus/Bus1", interface: "org.freedesktop.DBus.Properties",
                member: "Get", arguments: [.string("org.notifybus.Bus1"), .string("Version")])
            slowest = max(slowest, ContinuousClock.now - started)
        }
        #expect(slowest < .milliseconds(250), "slowest Get of Version after the garbage: \(slowest)")
        let after = ProcessStats.statusKiB("VmRSS", of: bed.daemon.pid)
        #expect(settled > 0 && after < settled + 4096, "VmRSS \(settled) KiB with 1,000 windows, \(after) KiB after the garbage")
        #expect(bed.daemon.terminate().flatMap(ChildProcess.exitStatus(ofWaitStatus:)) == 0)
    }
}
