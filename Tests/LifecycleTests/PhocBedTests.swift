import EpollLoop
@testable import NotifyBusLifecycle
import SystemSupport
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Where the tests on a headless phoc can run: as root, with phoc and foot installed and a
/// writable cgroup2 mount (`SwayBedEnvironment.mount`).
enum PhocBedEnvironment {
    /// Whether phoc and foot are installed.
    static let hasPhoc = ["/usr/bin/phoc", "/usr/bin/foot"].allSatisfy { (program: String) in access(program, X_OK) == 0 }

    /// Whether the tests run: in CI always (and fail there when the bed cannot be made),
    /// elsewhere only where they can.
    static var testsRun: Bool { getenv("CI") != nil || (SwayBedEnvironment.mount != nil && hasPhoc) }
}

/// The test bed itself: a headless phoc 0.24 as `nobody` with foot windows in app scopes, driven
/// by the tests' own Wayland client as Phosh drives it (activate, the overview's layer surface),
/// and watched by the daemon's own `WlrToplevelWatcher`.
@Suite(.serialized, .enabled(if: PhocBedEnvironment.testsRun)) struct PhocBedTests {
    @Test func phocStartsAsNobodyWithASeatAndStopsLeavingNothing() async throws {
        let phoc = try await HeadlessPhoc()
        #expect(phoc.environment == ["XDG_RUNTIME_DIR": phoc.runtimeDirectory, "WAYLAND_DISPLAY": "wayland-0"])
        #expect(phoc.waylandDisplay == "wayland-0")
        #expect(access(phoc.displayPath, F_OK) == 0)
        #expect(owner(of: "/proc/\(phoc.pid)") == 65534)
        let client = try phoc.testClient()
        #expect(client.hasSeat)
        #expect(try await phoc.toplevels().isEmpty)
        let pids = [phoc.pid, client.pid]
        #expect(client.stop() == 0, "the client exits with 0 at the end of its input")
        phoc.stop()
        phoc.stop()
        for pid in pids { #expect(kill(pid, 0) != 0) }
        #expect(access(phoc.runtimeDirectory, F_OK) != 0)
        #expect(throws: HarnessError.self) { try phoc.testClient() }
    }

    @Test func windowsInScopesAndActivateMovesActivatedForTheWatcherToo() async throws {
        let scopes = try SwayBedEnvironment.appScopes()
        defer { scopes.remove() }
        let phoc = try await HeadlessPhoc()
        defer { phoc.stop() }
        let scopeA = try scopes.makeScope(name: "app-test-org.example.A-1.scope")
        let scopeB = try scopes.makeScope(name: "app-org.example.B-2.scope")
        let a = try await phoc.openWindow(appID: "org.example.A", inCgroup: scopeA.directory)
        let b = try await phoc.openWindow(appID: "org.example.B", inCgroup: scopeB.directory)
        #expect(ControlGroup.group(ofProcess: a.pid) == scopeA.group)
        #expect(ControlGroup.group(ofProcess: b.pid) == scopeB.group)
        #expect(scopeA.processes.contains(a.pid))
        #expect(scopeB.processes.contains(b.pid))

        // Each new window takes the focus by itself; every one is maximized.
        let toplevels = try await phoc.toplevels()
        #expect(toplevels.map(\.appID) == ["org.example.A", "org.example.B"])
        #expect(toplevels.filter(\.activated).map(\.appID) == ["org.example.B"])
        #expect(toplevels.allSatisfy { $0.states.contains("maximized") })

        let watch = try await WlrWatcherRun(display: phoc.displayPath)
        defer { watch.stop() }
        #expect(watch.compositorPID == phoc.pid)
        let first = try #require(await watch.nextWindows())
        #expect(first.compactMap(\.appID).sorted() == ["org.example.A", "org.example.B"])
        #expect(first.filter(\.activated).map(\.appID) == ["org.example.B"])

        for (target, other) in [("org.example.A", "org.example.B"), ("org.example.B", "org.example.A")] {
            try await phoc.focus(appID: target)
            #expect(try phoc.testClient().activated() == [target])
            let moved = await watch.updates.wait { updates in
                guard let windows = updates.last?.windows else { return false }
                return windows.filter(\.activated).map(\.appID) == [target] && windows.contains { $0.appID == other }
            }
            #expect(moved, "\(watch.updates.all.map(\.update))")
        }
    }

    @Test func coverDeactivatesEveryToplevelAndUncoverGivesTheFocusBack() async throws {
        let phoc = try await HeadlessPhoc()
        defer { phoc.stop() }
        try await phoc.openWindow(appID: "org.example.A")
        try await phoc.openWindow(appID: "org.example.B")
        try await phoc.focus(appID: "org.example.A")
        let watch = try await WlrWatcherRun(display: phoc.displayPath)
        defer { watch.stop() }
        #expect(try #require(await watch.nextWindows()).filter(\.activated).map(\.appID) == ["org.example.A"])

        try await phoc.cover()
        #expect(try await phoc.toplevels().filter(\.activated).isEmpty)
        let covered = await watch.updates.wait { updates in
            updates.last?.windows.map { $0.count == 2 && !$0.contains(where: \.activated) } ?? false
        }
        #expect(covered, "\(watch.updates.all.map(\.update))")
        #expect(try await phoc.uncover() == ["org.example.A"])
        let back = await watch.updates.wait { updates in
            updates.last?.windows?.filter(\.activated).map(\.appID) == ["org.example.A"]
        }
        #expect(back, "\(watch.updates.all.map(\.update))")

        // While covered phoc ignores activate, and focuses that toplevel when the cover goes.
        try await phoc.cover()
        await #expect(throws: HarnessError.self) { try await phoc.focus(appID: "org.example.B", timeout: .milliseconds(300)) }
        #expect(try await phoc.toplevels().filter(\.activated).isEmpty)
        #expect(try await phoc.uncover() == ["org.example.B"])

        // A window opened while covered is not activated until the cover goes.
        try await phoc.cover()
        try await phoc.openWindow(appID: "org.example.C")
        #expect(try await phoc.toplevels().filter(\.activated).isEmpty)
        #expect(try await phoc.uncover() == ["org.example.C"])
    }

    @Test func closingTheActivatedWindowActivatesThePreviouslyFocusedOne() async throws {
        let phoc = try await HeadlessPhoc()
        defer { phoc.stop() }
        for app in ["org.example.A", "org.example.B", "org.example.C"] { try await phoc.openWindow(appID: app) }
        try await phoc.focus(appID: "org.example.A")
        try await phoc.focus(appID: "org.example.C")
        try await phoc.close(appID: "org.example.C")
        #expect(try phoc.testClient().activated() == ["org.example.A"])
        try await phoc.close(appID: "org.example.A")
        #expect(try phoc.testClient().activated() == ["org.example.B"])
        #expect(try await phoc.toplevels().map(\.appID) == ["org.example.B"])
    }

    @Test func theBareFreezerClientWritesCgroupFreezeOnActivated() async throws {
        let scopes = try SwayBedEnvironment.appScopes()
        defer { scopes.remove() }
        let phoc = try await HeadlessPhoc()
        defer { phoc.stop() }
        let scope = try scopes.makeScope(name: "app-test-org.example.A-1.scope")
        try await phoc.openWindow(appID: "org.example.A", inCgroup: scope.directory)
        try await phoc.openWindow(appID: "org.example.B")

        let start = monotonicNanoseconds()
        let freezer = try ChildProcess(
            executable: Paths.executable("WaylandTestClient"),
            arguments: ["--freeze-on-activate", "org.example.A", scope.directory],
            environment: phoc.environment.merging(["PATH": "/usr/bin:/bin"]) { mine, _ in mine },
            standardInput: .nullDevice, standardError: .append(phoc.runtimeDirectory + "/freezer.log"))
        defer { freezer.terminate(signal: SIGKILL) }
        var last = start
        func nextWrite() throws -> String {
            let line = try #require(freezer.readLine(timeout: patience))
            let fields = line.split(separator: " ")
            let stamp = try #require(fields.first.flatMap { Int64($0) }, "\(line)")
            #expect(stamp >= last && stamp <= monotonicNanoseconds(), "\(line)")
            last = stamp
            return String(fields.last ?? "")
        }
        // B has the focus: A's group is frozen at once.
        #expect(try nextWrite() == "1")
        #expect(await eventually { scope.isFrozen })
        // A frozen foot can be activated; its group is thawed on `activated`.
        try await phoc.focus(appID: "org.example.A")
        #expect(try nextWrite() == "0")
        #expect(await eventually { !scope.isFrozen })
        try await phoc.focus(appID: "org.example.B")
        #expect(try nextWrite() == "1")
        #expect(await eventually { scope.isFrozen })
        // SIGTERM: it thaws the group it froze before it exits.
        let status = freezer.terminate(signal: SIGTERM)
        #expect(status.flatMap(ChildProcess.exitStatus(ofWaitStatus:)) == 0)
        #expect(try nextWrite() == "0")
        #expect(readFile(scope.directory + "/cgroup.freeze") == "0\n")
        #expect(await eventually { !scope.isFrozen })
    }

    @Test func aKilledPhocLeavesItsSocketAndARestartedOneTakesTheSameName() async throws {
        let phoc = try await HeadlessPhoc()
        defer { phoc.stop() }
        let window = try await phoc.openWindow(appID: "org.example.A")
        let watch = try await WlrWatcherRun(display: phoc.displayPath)
        defer { watch.stop() }
        #expect(try #require(await watch.nextWindows()).map(\.appID) == ["org.example.A"])
        let old = (phoc: phoc.pid, client: try phoc.testClient().pid)

        await phoc.killCompositor()
        for pid in [old.phoc, old.client, window.pid] { #expect(kill(pid, 0) != 0) }
        let said = readFile(phoc.runtimeDirectory + "/client.log") ?? ""
        #expect(said.contains("the compositor connection is lost"), "\(said)")
        #expect(phoc.pid == -1)
        #expect(access(phoc.displayPath, F_OK) == 0)
        #expect(access(phoc.displayPath + ".lock", F_OK) == 0)
        #expect(await watch.updates.wait { $0.contains { $0.lostReason != nil } })

        try await phoc.restart()
        #expect(phoc.pid != old.phoc && kill(phoc.pid, 0) == 0)
        #expect(phoc.waylandDisplay == "wayland-0")
        #expect(try await phoc.toplevels().isEmpty)
        try await phoc.openWindow(appID: "org.example.B")
        let again = try await WlrWatcherRun(display: phoc.displayPath)
        defer { again.stop() }
        #expect(try #require(await again.nextWindows()).filter(\.activated).map(\.appID) == ["org.example.B"])
    }

    @Test func stopLeavesNoProcessAndTheScopesNoGroupEvenWithAFrozenWindow() async throws {
        let scopes = try SwayBedEnvironment.appScopes()
        defer { scopes.remove() }
        let phoc = try await HeadlessPhoc()
        defer { phoc.stop() }
        let scopeA = try scopes.makeScope(name: "app-test-org.example.A-1.scope")
        let scopeB = try scopes.makeScope(name: "app-test-org.example.B-2.scope")
        try await phoc.openWindow(appID: "org.example.A", inCgroup: scopeA.directory)
        try await phoc.openWindow(appID: "org.example.B", inCgroup: scopeB.directory)
        // foot and its shell's sleep in each scope.
        #expect(await eventually { scopeA.processes.count == 2 && scopeB.processes.count == 2 })
        try scopeA.setFrozen(true)
        #expect(await eventually { scopeA.isFrozen })
        let pids = [phoc.pid, try phoc.testClient().pid] + scopeA.processes + scopeB.processes

        phoc.stop()
        scopes.remove()
        #expect(access(phoc.runtimeDirectory, F_OK) != 0)
        #expect(access(scopeA.directory, F_OK) != 0 && access(scopeB.directory, F_OK) != 0)
        // Reaped, or dead and waiting for PID 1 (which reaps orphans slowly).
        let gone = await eventually { pids.allSatisfy { ProcessStats.state(of: $0).map { $0 == "Z" } ?? true } }
        #expect(gone, "\(pids.map { ($0, ProcessStats.state(of: $0).map(String.init) ?? "gone") })")
    }
}

extension HeadlessPhoc {
    /// The Wayland socket's absolute path (libwayland takes one as the display name).
    fileprivate var displayPath: String { runtimeDirectory + "/" + waylandDisplay }
}

/// The owner's user id of `path`.
private func owner(of path: String) -> uid_t? {
    var info = stat()
    return stat(path, &info) == 0 ? info.st_uid : nil
}

/// CLOCK_MONOTONIC in nanoseconds (the freezer client's clock).
private func monotonicNanoseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}
