import DBus
import SystemSupport
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real systemd 252 user manager of `SystemdUserManager`: it comes up and goes without a trace,
/// app scopes freeze and thaw through it, `StartTransientUnit` adopts a running process, and what
/// it makes of freezes it did not make (Tests/README.md, "A real systemd user manager").
@Suite(.enabled(if: SystemdBedEnvironment.testsRun)) struct SystemdUserManagerTests {
    @Test func theManagerRunsOwnsItsNameOnItsBusAndLeavesNothingWhenStopped() async throws {
        let initScope = try #require(SystemdBedEnvironment.rootInitScope)
        let hadInitScope = access(initScope, F_OK) == 0
        let manager = try await SystemdBedEnvironment.manager()
        defer { manager.stop() }
        #expect(await manager.systemState() == "running")
        // Outside the namespace there is no /run/systemd/system: systemctl says offline there.
        let outside = try await runCommandToEnd(
            "/usr/bin/systemctl", ["--user", "is-system-running"], environment: manager.environment.merging(["PATH": "/usr/bin:/bin"]) { $1 })
        #expect(outside.output.hasPrefix("offline"))
        // The init.scope made for its start is gone already (one that was there stays).
        #expect((access(initScope, F_OK) == 0) == hadInitScope)

        #expect(manager.topGroup.hasPrefix("/nb-systemd-\(getpid())-"))
        #expect(manager.root == manager.topGroup + "/user@0.service")
        #expect(manager.appSlice == manager.root + "/app.slice")
        #expect(access(manager.appSliceDirectory, F_OK) == 0)
        #expect(ControlGroup.group(ofProcess: manager.pid) == manager.root + "/init.scope")
        #expect(try await manager.property("ControlGroup", of: "init.scope") == manager.root + "/init.scope")
        var info = stat()
        #expect(stat(manager.runtimeDirectory, &info) == 0 && info.st_mode & 0o777 == 0o711)
        #expect(manager.busAddress == "unix:path=\(manager.runtimeDirectory)/bus")
        #expect(manager.environment == ["XDG_RUNTIME_DIR": manager.runtimeDirectory, "DBUS_SESSION_BUS_ADDRESS": manager.busAddress])

        // Its bus is its own dbus.service, and it owns org.freedesktop.systemd1 there.
        let client = try await manager.connect()
        let owner = try #require(try await client.call(
            destination: .bus, path: .bus, interface: .bus, member: "GetNameOwner",
            arguments: [.string(SystemdUserManager.busName.rawValue)]).first?.stringValue)
        #expect(try await client.credentials(of: BusName(validating: owner)).processID == UInt32(manager.pid))
        await client.close()
        let busPID = try #require(pid_t(try await manager.property("MainPID", of: "dbus.service")))
        #expect(ControlGroup.group(ofProcess: busPID) == manager.root + "/session.slice/dbus.service")
        #expect(try await manager.property("ActiveState", of: "dbus.socket") == "active")

        let pid = manager.pid
        manager.stop()
        #expect(ProcessStats.state(of: pid) == nil)
        #expect(ProcessStats.state(of: busPID) == nil)
        #expect(access(manager.topDirectory, F_OK) != 0)
        #expect(access(manager.runtimeDirectory, F_OK) != 0)
        #expect((access(initScope, F_OK) == 0) == hadInitScope)
        manager.stop()
        await #expect(throws: (any Error).self) { try await manager.freezeUnit("init.scope") }
    }

    @Test func anAppScopeFreezesAndThawsThroughSystemctlAndDBus() async throws {
        let manager = try await SystemdBedEnvironment.manager()
        defer { manager.stop() }
        let app = try await manager.startInScope(appID: "org.example.A", command: ["/bin/sleep", "600"])
        #expect(app.unit == "app-test-org.example.A-1.scope")
        #expect(app.scope.group == manager.appSlice + "/app-test-org.example.A-1.scope")
        #expect(ControlGroup.group(ofProcess: app.pid) == app.scope.group)
        #expect(app.scope.processes == [app.pid])
        #expect(try await manager.property("Slice", of: app.unit) == "app.slice")
        #expect(try await manager.freezerState(of: app.unit) == .running)

        // systemctl returns once the group is frozen (or thawed).
        try await manager.systemctl(["freeze", app.unit])
        #expect(app.scope.isFrozen)
        #expect(try await manager.freezerState(of: app.unit) == .frozen)
        try await manager.systemctl(["thaw", app.unit])
        #expect(!app.scope.isFrozen)
        #expect(try await manager.freezerState(of: app.unit) == .running)

        // So do FreezeUnit and ThawUnit.
        try await manager.freezeUnit(app.unit)
        #expect(app.scope.isFrozen)
        #expect(try await manager.unitFreezerState(app.unit) == .frozen)
        try await manager.thawUnit(app.unit)
        #expect(!app.scope.isFrozen)
        #expect(try await manager.unitFreezerState(app.unit) == .running)

        // A window's process runs as nobody, in its own scope.
        let window = try await manager.startInScope(appID: "org.example.B", command: ["/bin/sleep", "600"], user: .nobody)
        #expect(window.unit == "app-test-org.example.B-2.scope")
        #expect(Self.userID(of: window.pid) == 65534)
        try await manager.freezeUnit(window.unit)
        #expect(window.scope.isFrozen && !app.scope.isFrozen)
    }

    @Test func startTransientUnitMovesARunningProcessIntoANewScope() async throws {
        let manager = try await SystemdBedEnvironment.manager()
        defer { manager.stop() }
        let log = try makeTemporaryFile("notifybus-adopted")
        defer { unlink(log) }
        let process = try ChildProcess("/bin/sleep", ["600"], environment: ["PATH": "/usr/bin:/bin"], log: log)
        defer { process.terminate(signal: SIGKILL) }
        #expect(ControlGroup.group(ofProcess: process.pid)?.hasPrefix(manager.topGroup) == false)

        let client = try await manager.connect()
        let removed = Recorder<DBusSignal>()
        let signals = await client.signals(matching: DBusMatchRule(
            sender: SystemdUserManager.busName, path: SystemdUserManager.objectPath,
            interface: SystemdUserManager.managerInterface, member: "JobRemoved"))
        let listener = Task { for await signal in signals { removed.append(signal) } }
        defer { listener.cancel() }
        // The manager sends its job signals once a client has subscribed.
        _ = try await client.call(
            destination: SystemdUserManager.busName, path: SystemdUserManager.objectPath,
            interface: SystemdUserManager.managerInterface, member: "Subscribe")

        let unit = "app-test-org.example.C-1.scope"
        let arguments = SystemdUserManager.transientScopeArguments(unit, pids: [process.pid])
        #expect(arguments.map(\.signature).joined() == "ssa(sv)a(sa(sv))")
        let reply = try await client.call(
            destination: SystemdUserManager.busName, path: SystemdUserManager.objectPath,
            interface: SystemdUserManager.managerInterface, member: "StartTransientUnit", arguments: arguments)
        guard case .objectPath(let job)? = reply.first, reply.count == 1 else {
            Issue.record("StartTransientUnit returned \(reply)")
            return
        }
        #expect(job.hasPrefix("/org/freedesktop/systemd1/job/"))
        // JobRemoved(u id, o job, s unit, s result): the job done, the process is in the scope.
        #expect(await removed.wait(timeout: patience) { $0.contains { $0.arguments.count == 4 && $0.arguments[1] == .objectPath(job) } })
        let done = try #require(removed.all.first { $0.arguments.count == 4 && $0.arguments[1] == .objectPath(job) })
        #expect(done.arguments[2] == .string(unit))
        #expect(done.arguments[3] == .string("done"))
        let scope = manager.scope(named: unit)
        #expect(ControlGroup.group(ofProcess: process.pid) == scope.group)
        #expect(scope.processes == [process.pid])
        #expect(try await manager.property("ControlGroup", of: unit) == scope.group)
        #expect(try await manager.property("CollectMode", of: unit) == "inactive-or-failed")
        try await manager.freezeUnit(unit)
        #expect(scope.isFrozen)
        try await manager.thawUnit(unit)
        await client.close()

        // When its process ends, the scope is collected and its group removed.
        process.terminate(signal: SIGKILL)
        let collected = await eventually(timeout: patience) {
            guard access(scope.directory, F_OK) != 0 else { return false }
            return (try? await manager.unitObject(unit)) == nil
        }
        #expect(collected)
    }

    @Test func aFreezeOrThawBehindSystemdsBackIsNotItsFreezerState() async throws {
        let manager = try await SystemdBedEnvironment.manager()
        defer { manager.stop() }
        let app = try await manager.startInScope(appID: "org.example.A", command: ["/bin/sleep", "600"])

        // Frozen by a write to cgroup.freeze: systemd still says running.
        try app.scope.setFrozen(true)
        #expect(await eventually { app.scope.isFrozen })
        try await Task.sleep(for: .milliseconds(200))
        #expect(try await manager.freezerState(of: app.unit) == .running)
        #expect(try await manager.unitFreezerState(app.unit) == .running)
        // ThawUnit of a unit it thinks running still writes 0: the app runs again.
        try await manager.thawUnit(app.unit)
        #expect(!app.scope.isFrozen)
        #expect(readFile(app.scope.directory + "/cgroup.freeze") == "0\n")

        // Frozen by systemd, thawed by a write: systemd still says frozen.
        try await manager.freezeUnit(app.unit)
        try app.scope.setFrozen(false)
        #expect(await eventually { !app.scope.isFrozen })
        try await Task.sleep(for: .milliseconds(200))
        #expect(try await manager.freezerState(of: app.unit) == .frozen)
        // FreezeUnit of a unit it thinks frozen writes 1 again, as ThawUnit writes 0 to a unit it
        // thinks running: each call makes the group what it asks for.
        try await manager.freezeUnit(app.unit)
        #expect(app.scope.isFrozen)
        try await manager.thawUnit(app.unit)
        #expect(try await manager.freezerState(of: app.unit) == .running)
        #expect(!app.scope.isFrozen)
    }

    @Test func systemdsThawUndoesAnotherFreezerOfTheUnitAndOfItsSlice() async throws {
        let manager = try await SystemdBedEnvironment.manager()
        defer { manager.stop() }
        let a = try await manager.startInScope(appID: "org.example.A", command: ["/bin/sleep", "600"])
        let b = try await manager.startInScope(appID: "org.example.B", command: ["/bin/sleep", "600"])
        let sliceFreeze = manager.appSliceDirectory + "/cgroup.freeze"

        // systemd froze A, another freezer writes 1 as well: systemd's thaw thaws A.
        try await manager.freezeUnit(a.unit)
        try a.scope.setFrozen(true)
        try await manager.thawUnit(a.unit)
        #expect(!a.scope.isFrozen)
        #expect(try await manager.freezerState(of: a.unit) == .running)

        // systemd froze A, another freezer froze app.slice and B: systemd's thaw of A thaws
        // app.slice too (it writes 0 to the unit's slices), and leaves B frozen.
        try await manager.freezeUnit(a.unit)
        try writeFile(sliceFreeze, "1")
        try b.scope.setFrozen(true)
        #expect(await eventually { a.scope.isFrozen && b.scope.isFrozen })
        try await manager.thawUnit(a.unit)
        #expect(!a.scope.isFrozen)
        #expect(readFile(sliceFreeze) == "0\n")
        #expect(b.scope.isFrozen)
        try b.scope.setFrozen(false)

        // FreezeUnit of A under a slice frozen by another freezer writes nothing to A (it is frozen
        // already) yet says frozen: when the other freezer thaws the slice, A runs, "frozen".
        try writeFile(sliceFreeze, "1")
        #expect(await eventually { a.scope.isFrozen })
        try await manager.freezeUnit(a.unit)
        #expect(readFile(a.scope.directory + "/cgroup.freeze") == "0\n")
        #expect(try await manager.freezerState(of: a.unit) == .frozen)
        try writeFile(sliceFreeze, "0")
        #expect(await eventually { !a.scope.isFrozen })
        #expect(try await manager.freezerState(of: a.unit) == .frozen)
        try await manager.thawUnit(a.unit)
    }

    /// The real user ID of `pid` (`/proc/PID/status`).
    static func userID(of pid: pid_t) -> uid_t? {
        let line = (readFile("/proc/\(pid)/status") ?? "").split(separator: "\n").first { $0.hasPrefix("Uid:") }
        return line?.split(whereSeparator: { $0 == "\t" || $0 == " " }).dropFirst().first.flatMap { uid_t($0) }
    }
}
