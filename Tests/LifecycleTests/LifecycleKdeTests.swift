import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `notifybusd --freeze-background` as a child process against a headless KWin 5.27 with GTK
/// windows in app scopes: the kde backend end to end, and KWin's permission for the window list
/// through a desktop file that names the notifybusd under test.
@Suite(.serialized, .enabled(if: KWinBedEnvironment.daemonTestsRun)) struct LifecycleKdeTests {
    /// The bed on a KWin that trusts the notifybusd under test (or nothing).
    private func bed(trusted: Bool = true) async throws -> LifecycleBed<HeadlessKWin> {
        try await LifecycleBed { try await HeadlessKWin(trusting: trusted ? [Paths.notifybusd] : []) }
    }

    /// The windows' processes come from the protocol's `pid_changed`: a window whose process is in
    /// no app unit is `no-app-unit`, even when an app scope named after its app id exists.
    @Test func aWindowsCgroupIsItsProcesssNotTheOneNamedAfterItsAppID() async throws {
        let bed = try await bed()
        defer { bed.stop() }
        let named = try bed.scopes.makeScope(name: "app-test-org.example.Out-9.scope")
        try await bed.open("org.example.Out", in: try bed.scopes.makeScope(name: "plain-1"))
        try await bed.open("org.example.B")
        try await bed.start(backend: "kde", environment: ["SWAYSOCK": nil])
        #expect(bed.waitFor("org.example.Out", "background", reason: "no-app-unit") != nil, "\(readFile(bed.daemon?.log ?? "") ?? "")")
        #expect(!named.isFrozen)
        #expect(bed.listed.isEmpty)
    }

    /// KWin's permission: without a desktop file naming the notifybusd under test, KWin's registry
    /// lacks the protocol, and the lifecycle source says so.
    @Test(arguments: ["kde", "auto"])
    func aNotifybusdKWinDoesNotTrustIsToldTheProtocolIsNotOffered(backend: String) async throws {
        let bed = try await bed(trusted: false)
        defer { bed.stop() }
        let (_, scopeA) = try await bed.open("org.example.A")
        try await bed.open("org.example.B")
        try await bed.start(backend: backend, environment: ["SWAYSOCK": nil])
        let source = try #require(bed.lifecycleSource())
        #expect(source["status"]?.stringValue == "unavailable")
        let reason = source["reason"]?.stringValue ?? ""
        let expected = backend == "kde"
            ? "the compositor does not offer org_kde_plasma_window_management"
            : "the compositor does not offer org_kde_plasma_window_management or zwlr_foreign_toplevel_manager_v1"
        #expect(reason == expected, "\(source)")
        try await Task.sleep(for: .seconds(3))
        #expect(!scopeA.isFrozen)
        #expect(bed.listed.isEmpty)
    }

    /// `auto` reads the display's registry once and takes KDE's protocol when both are offered.
    @Test func autoTakesKDEsProtocolBeforeWlrs() async throws {
        let scopes = try SwayBedEnvironment.appScopes()
        defer { scopes.remove() }
        let compositor = try FakeCompositor(
            globals: [
                (1, "wl_seat", 7), (2, "zwlr_foreign_toplevel_manager_v1", 3), (3, "org_kde_plasma_window_management", 16),
            ],
            windows: [.init(appID: "org.example.A", flags: 0x38f01, pid: 1)])
        defer { compositor.stop() }
        let runtime = try makeTemporaryDirectory("lifecycle-auto")
        defer { removeTree(runtime) }
        try writeFile(runtime + "/lifecycle.conf", "cgroup-root = \(scopes.root)\n")
        let bed = try await DaemonBed(
            arguments: ["--source", "lifecycle", "--freeze-background", "--toplevels", "auto", "--freeze-config", runtime + "/lifecycle.conf"],
            environment: ["XDG_RUNTIME_DIR": runtime, "WAYLAND_DISPLAY": compositor.path, "SWAYSOCK": nil])
        let watcher = try bed.notifywatch(["app/**"])
        let source = bed.lines(of: watcher, until: { $0["source"]?.stringValue == "lifecycle" })?.last
        #expect(source?["status"]?.stringValue == "running", "\(source.map { "\($0)" } ?? "no source line")")
        #expect(compositor.binds.all.map(\.interface) == ["org_kde_plasma_window_management"])
        #expect(bed.daemon.terminate().flatMap(ChildProcess.exitStatus(ofWaitStatus:)) == 0)
    }
}
