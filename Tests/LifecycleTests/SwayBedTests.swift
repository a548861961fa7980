import SystemSupport
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The test bed itself: a headless sway as `nobody` with foot windows in app scopes.
@Suite(.enabled(if: SwayBedEnvironment.testsRun)) struct SwayBedTests {
    @Test func swayStartsAnswersAndStopsWithoutLeavingItsDirectory() async throws {
        let sway = try await HeadlessSway()
        #expect(sway.environment["SWAYSOCK"] == sway.ipcSocket)
        #expect(sway.environment["WAYLAND_DISPLAY"] == "wayland-1")
        #expect(access(sway.runtimeDirectory + "/" + sway.waylandDisplay, F_OK) == 0)
        #expect(sway.ipcSocket.hasSuffix(".\(sway.pid).sock"))
        #expect(try await sway.views().isEmpty)
        sway.stop()
        #expect(kill(sway.pid, 0) != 0)
        #expect(access(sway.runtimeDirectory, F_OK) != 0)
    }

    @Test func windowsInScopesAreFocusedHiddenAndClosed() async throws {
        let scopes = try SwayBedEnvironment.appScopes()
        defer { scopes.remove() }
        let sway = try await HeadlessSway()
        defer { sway.stop() }
        let scopeA = try scopes.makeScope(name: "app-test-org.example.A-1.scope")
        let scopeB = try scopes.makeScope(name: "app-org.example.B-2.scope")
        let a = try await sway.openWindow(appID: "org.example.A", inCgroup: scopeA.directory)
        let b = try await sway.openWindow(appID: "org.example.B", inCgroup: scopeB.directory)
        #expect(ControlGroup.group(ofProcess: a.pid) == scopeA.group)
        #expect(ControlGroup.group(ofProcess: b.pid) == scopeB.group)
        #expect(scopeA.processes.contains(a.pid))

        var views = try await sway.views()
        #expect(views.map(\.appID) == ["org.example.A", "org.example.B"])
        #expect(views.map(\.pid) == [a.pid, b.pid])
        #expect(views.map(\.id) == [a.id, b.id])
        #expect(views.filter(\.focused).map(\.appID) == ["org.example.B"])

        try await sway.focus(appID: "org.example.A")
        views = try await sway.views()
        #expect(views.filter(\.focused).map(\.appID) == ["org.example.A"])

        try await sway.hide(appID: "org.example.A")
        views = try await sway.views()
        #expect(views.first { $0.appID == "org.example.A" }?.inScratchpad == true)
        #expect(views.first { $0.appID == "org.example.A" }?.focused == false)

        try await sway.close(appID: "org.example.B")
        #expect(try await sway.views().map(\.appID) == ["org.example.A"])
        await #expect(throws: HarnessError.self) { try await sway.command("[con_id=\(b.id)] focus") }
    }

    @Test func theTestClientFollowsActivatesAndCoversSwayWindowsToo() async throws {
        let sway = try await HeadlessSway()
        defer { sway.stop() }
        try await sway.openWindow(appID: "org.example.A")
        try await sway.openWindow(appID: "org.example.B")
        let client = try WaylandTestClientProcess(environment: sway.environment, log: sway.runtimeDirectory + "/client.log")
        defer { client.stop() }
        #expect(client.hasSeat, "sway has its seat from the start")
        #expect(Set(try client.toplevels().map(\.appID)) == ["org.example.A", "org.example.B"])
        #expect(try client.activated() == ["org.example.B"])

        try client.activate(appID: "org.example.A")
        #expect(try client.activated() == ["org.example.A"])
        #expect(try await sway.views().filter(\.focused).map(\.appID) == ["org.example.A"])
        try client.cover()
        #expect(try client.activated().isEmpty)
        #expect(try client.uncover() == ["org.example.A"])

        // The protocol's close: foot exits.
        try client.close(appID: "org.example.B")
        try client.waitUntilGone(appID: "org.example.B")
        #expect(try await sway.views().map(\.appID) == ["org.example.A"])
    }

    @Test func removingTheScopesThawsAFrozenWindowAndLeavesNoGroup() async throws {
        let scopes = try SwayBedEnvironment.appScopes()
        defer { scopes.remove() }
        let sway = try await HeadlessSway()
        defer { sway.stop() }
        let scope = try scopes.makeScope(name: "app-test-org.example.A-1.scope")
        let window = try await sway.openWindow(appID: "org.example.A", inCgroup: scope.directory)
        try scope.setFrozen(true)
        #expect(await eventually { scope.isFrozen })
        scopes.remove()
        let top = String(scopes.directory.dropLast("/user@0.service/app.slice".count))
        #expect(top.hasPrefix(scopes.mountPoint + "/nb-life-"))
        #expect(access(top, F_OK) != 0)
        #expect(access(scope.directory, F_OK) != 0)
        // Moved out (to the mount's root group) and thawed: sway can still close it.
        #expect(ControlGroup.group(ofProcess: window.pid) == SwayBedEnvironment.mount?.root)
        try await sway.close(appID: "org.example.A")
    }

    @Test func aWindowInAFrozenScopeIsClosedAndSwayStopsWithOneFrozen() async throws {
        let scopes = try SwayBedEnvironment.appScopes()
        defer { scopes.remove() }
        let sway = try await HeadlessSway()
        defer { sway.stop() }
        let scopeA = try scopes.makeScope(name: "app-test-org.example.A-1.scope")
        let scopeB = try scopes.makeScope(name: "app-test-org.example.B@3.service")
        let a = try await sway.openWindow(appID: "org.example.A", inCgroup: scopeA.directory)
        try await sway.openWindow(appID: "org.example.B", inCgroup: scopeB.directory)
        try scopeA.setFrozen(true)
        try scopeB.setFrozen(true)
        #expect(await eventually { scopeA.isFrozen && scopeB.isFrozen })
        try await sway.close(appID: "org.example.A")
        #expect(kill(a.pid, 0) != 0)
        #expect(try await sway.views().map(\.appID) == ["org.example.B"])
        sway.stop()
        #expect(kill(sway.pid, 0) != 0)
        scopes.remove()
        #expect(access(scopeB.directory, F_OK) != 0)
    }
}
