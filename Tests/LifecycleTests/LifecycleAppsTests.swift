import NotifyBus
import NotifyBusLifecycle
import SystemSupport
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// "Every app in reach" (the article Freezing background apps), end to end against a headless
/// sway: a real GApplication found by the well-known name equal to its app id, and moved into a
/// scope of its own through a real systemd user manager when the session put it in no app unit.
@Suite(.serialized, .enabled(if: SwayBedEnvironment.testsRun)) struct LifecycleAppsTests {
    static let mail = "org.example.Mail"

    /// A cgroup of the bed's tree that is no app unit (`name`, beside the app scopes), as a
    /// session's own cgroup or a D-Bus activated service's is.
    static func plainGroup(_ bed: LifecycleBed<HeadlessSway>, _ name: String) throws -> AppScopes.Scope {
        try bed.scopes.makeScope(name: name)
    }

    @Test func anAppInAnAppUnitNotNamedAfterItIsFoundByItsBusNameWithTheWlrProtocol() async throws {
        let bed = try await LifecycleBed()
        defer { bed.stop() }
        // The unit's name carries no app id: the wlr protocol gives no PID, the name forms find nothing.
        try await bed.start(["--freeze-delay", "2"], backend: "wlr")
        let scope = try bed.scopes.makeScope(name: "app-test-launcher-1.scope")
        try await bed.openApp(Self.mail, in: scope)
        try await bed.open("org.example.B")
        try await bed.sway.focus(appID: "org.example.B")
        let log = WatcherLog(bed)
        #expect(log.waitFor(Self.mail, "frozen", fromStart: true))
        #expect(scope.isFrozen)
        #expect(bed.listed.contains(scope.group))
    }

    @Test func withExistingUnitsOnlyAnAppInNoAppUnitIsNoAppUnit() async throws {
        let bed = try await LifecycleBed()
        defer { bed.stop() }
        try writeFile(bed.config, "cgroup-root = \(bed.scopes.root)\napp-units = existing\n")
        try await bed.start(["--freeze-delay", "2"], backend: "wlr")
        let group = try Self.plainGroup(bed, "dbus-:1.2-org.example.Mail@0.service")
        try await bed.openApp(Self.mail, in: group)
        try await bed.open("org.example.B")
        try await bed.sway.focus(appID: "org.example.B")
        let log = WatcherLog(bed)
        #expect(log.waitFor(Self.mail, "background", reason: "no-app-unit", fromStart: true))
        #expect(!group.isFrozen)
    }

    @Test(.enabled(if: SystemdBedEnvironment.testsRun))
    func anAppInTheSessionsCgroupIsMovedIntoAScopeOfItsOwnThenFrozenAndThawedThroughTheManager() async throws {
        let bed = try await LifecycleBed(manager: true)
        defer { bed.stop() }
        let manager = try #require(bed.manager)
        try await bed.start(["--freeze-delay", "2"])
        // Started from a terminal or a launcher that makes no unit: in the session's cgroup.
        let session = try Self.plainGroup(bed, "session-2.scope")
        let opened = ContinuousClock.now
        let (app, _) = try await bed.openApp(Self.mail, in: session)
        let made = AppUnit.madeScopeName(appID: Self.mail, pid: app.pid)
        #expect(await eventually(timeout: .seconds(5)) { ControlGroup.group(ofProcess: app.pid) == manager.appSlice + "/" + made })
        let movedAfter = ContinuousClock.now - opened
        #expect(movedAfter < .seconds(3), "moved \(movedAfter) after its window was opened")
        #expect(try await manager.property("CollectMode", of: made) == "inactive-or-failed")
        try await bed.open("org.example.B")
        let log = WatcherLog(bed)
        #expect(log.waitFor(Self.mail, "frozen", fromStart: true))
        let scope = manager.scope(named: made)
        #expect(scope.isFrozen)
        #expect(try await manager.freezerState(of: made) == .frozen)
        try await bed.sway.focus(appID: Self.mail)
        #expect(log.waitFor(Self.mail, "foreground"))
        #expect(await eventually(timeout: .seconds(2)) { !scope.isFrozen })
        #expect(try await manager.freezerState(of: made) == .running)
        // Moved once: its later processes are in the scope with it, nothing is moved again.
        #expect(try await manager.systemctl(["list-units", "--no-legend", "app-notifybus-*"]).split(separator: "\n").count == 1)
    }

    @Test(.enabled(if: SystemdBedEnvironment.testsRun))
    func anAppThatDBusActivationStartedIsFoundByItsBusNameAndMoved() async throws {
        let bed = try await LifecycleBed(manager: true)
        defer { bed.stop() }
        let manager = try #require(bed.manager)
        try await bed.start(["--freeze-delay", "2"], backend: "wlr")
        // A D-Bus activated app runs in a unit of the bus's (dbus-broker's naming), no app unit.
        let activated = try Self.plainGroup(bed, "dbus-:1.2-org.example.Mail@0.service")
        let (app, _) = try await bed.openApp(Self.mail, in: activated)
        let made = AppUnit.madeScopeName(appID: Self.mail, pid: app.pid)
        #expect(await eventually(timeout: .seconds(5)) { ControlGroup.group(ofProcess: app.pid) == manager.appSlice + "/" + made })
        try await bed.open("org.example.B")
        try await bed.sway.focus(appID: "org.example.B")
        let log = WatcherLog(bed)
        #expect(log.waitFor(Self.mail, "frozen", fromStart: true))
        #expect(try await manager.freezerState(of: made) == .frozen)
    }

    @Test(.enabled(if: SystemdBedEnvironment.testsRun))
    func aProtectedProcessIsNeverMoved() async throws {
        let bed = try await LifecycleBed(manager: true)
        defer { bed.stop() }
        let manager = try #require(bed.manager)
        try await bed.start(["--freeze-delay", "2"])
        // The app's process also owns the notification service's name: protected, never moved.
        let session = try Self.plainGroup(bed, "session-3.scope")
        let daemon = try #require(bed.daemon)
        let notifications = try await DBusMockProcess(
            bus: daemon.session, name: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
            interface: "org.freedesktop.Notifications")
        defer { notifications.process.terminate(signal: SIGKILL) }
        try writeFile(session.directory + "/cgroup.procs", "\(notifications.pid)\n")
        try await Task.sleep(for: .seconds(1))
        _ = try await bed.openApp(Self.mail, in: session)
        try await bed.open("org.example.B")
        let log = WatcherLog(bed)
        #expect(log.waitFor(Self.mail, "background", reason: "no-app-unit", fromStart: true))
        #expect(try await manager.systemctl(["list-units", "--no-legend", "app-notifybus-*"]).isEmpty)
    }
}
