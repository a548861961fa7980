import DBus
import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `notifybusd --freeze-background` as a child process, against a headless sway with foot
/// windows in app scopes: the rules of the article Freezing background apps, end to end.
@Suite(.serialized, .enabled(if: SwayBedEnvironment.testsRun)) struct LifecycleDaemonTests {
    /// A bed with A frozen in the background and B in front, by a daemon then killed (SIGKILL):
    /// A stays frozen.
    private static func appFrozenByAKilledDaemon() async throws -> (LifecycleBed<HeadlessSway>, AppScopes.Scope) {
        let bed = try await LifecycleBed()
        do {
            let (_, scopeA) = try await bed.open("org.example.A")
            try await bed.open("org.example.B")
            try await bed.start()
            #expect(bed.waitFor("org.example.A", "frozen") != nil)
            #expect(bed.stopDaemon(SIGKILL) == nil)
            #expect(scopeA.isFrozen)
            return (bed, scopeA)
        } catch {
            bed.stop()
            throw error
        }
    }

    @Test func autoTakesTheWlrProtocolWithoutSway() async throws {
        let bed = try await LifecycleBed()
        defer { bed.stop() }
        let (_, scopeA) = try await bed.open("org.example.A")
        try await bed.open("org.example.B")
        try await bed.start(backend: "auto", environment: ["SWAYSOCK": nil])
        #expect(bed.lifecycleSource()?["status"]?.stringValue == "running")
        #expect(bed.waitFor("org.example.A", "frozen") != nil)
        #expect(scopeA.isFrozen)
    }

    /// A compositor that takes the connection and never answers: the daemon says `unavailable`
    /// and keeps answering its clients (it reads the registry on its loop, never waiting for it).
    @Test func aCompositorThatNeverAnswersStallsNothing() async throws {
        let scopes = try SwayBedEnvironment.appScopes()
        defer { scopes.remove() }
        let runtime = try makeTemporaryDirectory("lifecycle-silent")
        defer { removeTree(runtime) }
        let socketPath = runtime + "/wayland-silent"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in socketPath.utf8.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        #expect(listen(listener, 16) == 0)   // connections wait in the backlog: nothing is ever read
        let config = runtime + "/lifecycle.conf"
        try writeFile(config, "cgroup-root = \(scopes.root)\n")
        let bed = try await DaemonBed(
            arguments: ["--source", "lifecycle", "--freeze-background", "--toplevels", "wlr", "--freeze-config", config],
            environment: ["XDG_RUNTIME_DIR": runtime, "WAYLAND_DISPLAY": socketPath, "SWAYSOCK": nil])
        let watcher = try bed.notifywatch(["app/**"])
        let source = bed.lines(of: watcher, until: { $0["source"]?.stringValue == "lifecycle" })?.last
        #expect(source?["status"]?.stringValue == "unavailable", "\(source.map { "\($0)" } ?? "no source line")")
        #expect(source?["reason"]?.stringValue == "the compositor did not answer wl_display.sync within 10000 ms")
        let client = try DBusClient(address: bed.session.dbusAddress)
        try await client.waitUntilConnected()
        var slowest = Duration.zero
        for _ in 0..<30 {
            let started = ContinuousClock.now
            _ = try await client.call(
                destination: "org.notifybus.Bus1", path: "/org/notifybus/Bus1", interface: "org.freedesktop.DBus.Properties",
                member: "Get", arguments: [.string("org.notifybus.Bus1"), .string("Version")])
            slowest = max(slowest, ContinuousClock.now - started)
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(slowest < .milliseconds(750), "slowest Get of Version: \(slowest)")
        #expect(bed.daemon.terminate().flatMap(ChildProcess.exitStatus(ofWaitStatus:)) == 0)
    }

    @Test func aKilledDaemonsFreezesAreThawedAtTheNextStartEvenWithoutTheFeature() async throws {
        let (bed, scopeA) = try await Self.appFrozenByAKilledDaemon()
        defer { bed.stop() }
        #expect(bed.listed == [scopeA.group])
        // The next start, without --freeze-background.
        let daemon = try await DaemonBed(environment: ["XDG_RUNTIME_DIR": bed.runtime])
        #expect(!scopeA.isFrozen)
        #expect(bed.listed.isEmpty)
        #expect(daemon.daemon.terminate().flatMap(ChildProcess.exitStatus(ofWaitStatus:)) == 0)
    }

    @Test func thawAllThawsWhatIsListedAndExits() async throws {
        let (bed, scopeA) = try await Self.appFrozenByAKilledDaemon()
        defer { bed.stop() }
        let log = try makeTemporaryFile("thaw-all")
        defer { unlink(log) }
        let thaw = try ChildProcess(Paths.notifybusd, ["--thaw-all"], environment: ["XDG_RUNTIME_DIR": bed.runtime], log: log)
        #expect(await thaw.exit(within: .seconds(10)).flatMap(ChildProcess.exitStatus(ofWaitStatus:)) == 0, "\(readFile(log) ?? "")")
        #expect(!scopeA.isFrozen)
        #expect(bed.listed.isEmpty)
    }
}
