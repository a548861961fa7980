import DBus
import NotifyBus
import SystemSupport
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The rules of the article Freezing background apps, one by one, end to end: the real
/// notifybusd (`--freeze-background --freeze-delay 2`) against a headless sway with foot windows
/// in app scopes of a private cgroup tree, read through `notifywatch --daemon 'app/**'`.
/// (LifecycleDaemonTests has the first freeze and thaw, SIGTERM, SIGKILL and `--thaw-all`.)
@Suite(.serialized, .enabled(if: SwayBedEnvironment.testsRun)) struct LifecycleRuleTests {
    static let delay = Duration.seconds(2)
    /// How late a freeze may come past its delay: 1 s by the rules, and what reading it takes.
    static let lateness = Duration.milliseconds(1500)

    // MARK: When an app is frozen

    @Test func theDelayComesFromTheFileAndTheOptionWinsOverIt() async throws {
        let bed = try await LifecycleBed()
        defer { bed.stop() }
        let (_, scopeA) = try await bed.open("org.example.A")
        try await bed.open("org.example.B")
        // The file's delay, 2 (not the default 10).
        try writeFile(bed.config, "cgroup-root = \(bed.scopes.root)\ndelay = 2\n")
        var started = ContinuousClock.now
        try await bed.start([])
        #expect(await eventually(timeout: .seconds(6)) { scopeA.isFrozen })
        var frozenAfter = ContinuousClock.now - started
        #expect(frozenAfter < Self.delay + Self.lateness, "frozen \(frozenAfter) after the start")
        #expect(bed.stopDaemon() == 0)
        #expect(!scopeA.isFrozen)
        // The file says an hour, the option 2 s: the option wins.
        try writeFile(bed.config, "cgroup-root = \(bed.scopes.root)\ndelay = 3600\n")
        started = ContinuousClock.now
        try await bed.start(["--freeze-delay", "2"])
        #expect(await eventually(timeout: .seconds(6)) { scopeA.isFrozen })
        frozenAfter = ContinuousClock.now - started
        #expect(frozenAfter >= Self.delay && frozenAfter < Self.delay + Self.lateness + .seconds(1), "frozen \(frozenAfter) after the start")
    }

    @Test func anAppWithWindowsInTwoScopesIsFrozenWhenBothAre() async throws {
        let bed = try await LifecycleBed()
        defer { bed.stop() }
        let (_, scope1) = try await bed.open("org.example.A")
        let (second, scope2) = try await bed.open("org.example.A")
        try await bed.open("org.example.B")
        try await bed.start()
        let log = WatcherLog(bed)
        #expect(log.waitFor("org.example.A", "frozen", fromStart: true))
        #expect(scope1.isFrozen && scope2.isFrozen)
        #expect(Set(bed.listed) == [scope1.group, scope2.group])
        #expect(log.states(of: "org.example.A") == ["background", "frozen"])
        // One of its windows in front: the app is, and that window's scope is thawed at once.
        let focus = ContinuousClock.now
        try await bed.sway.command("[con_id=\(second.id)] focus")
        #expect(await eventually(timeout: .seconds(2)) { !scope2.isFrozen })
        let thawedAfter = ContinuousClock.now - focus
        #expect(thawedAfter < .milliseconds(500), "thawed \(thawedAfter) after the focus")
        #expect(log.waitFor("org.example.A", "foreground"))
        #expect(!bed.listed.contains(scope2.group))
        // The unit is the cgroup: the other scope's window is still not activated, so it stays.
        #expect(scope1.isFrozen)
        #expect(bed.listed == [scope1.group])
    }

    @Test func exemptAppsAreNeverFrozen() async throws {
        let bed = try await LifecycleBed()
        defer { bed.stop() }
        // Exempt by the option, and by the file's `exempt` on two lines (two ids on one).
        try writeFile(bed.config, """
            cgroup-root = \(bed.scopes.root)
            exempt = org.example.C org.example.Unused
            # a comment
            exempt = org.example.D

            """)
        let exempt = ["org.example.A", "org.example.C", "org.example.D"]
        var scopes: [AppScopes.Scope] = []
        for app in exempt { scopes.append(try await bed.open(app).scope) }
        let (_, scopeX) = try await bed.open("org.example.X")
        try await bed.open("org.example.B")
        try await bed.start(["--freeze-delay", "2", "--freeze-exempt", "org.example.A"])
        let log = WatcherLog(bed)
        for app in exempt { #expect(log.waitFor(app, "background", reason: "exempt", fromStart: true), "\(app)") }
        #expect(log.waitFor("org.example.X", "frozen", fromStart: true))
        #expect(scopes.allSatisfy { !$0.isFrozen })
        #expect(scopeX.isFrozen)
        #expect(bed.listed == [scopeX.group])
        for app in exempt {
            #expect(log.states(of: app) == ["background", "background"], "\(app): \(log.values(of: app))")
            #expect(log.values(of: app).first?["reason"] == .null)
        }
    }

    @Test func aWindowWhoseProcessIsInNoAppUnitIsNeverFrozen() async throws {
        let bed = try await LifecycleBed()
        let extra = ExtraGroups(bed.scopes)
        defer {
            bed.stopDaemon()
            bed.sway.stop()
            extra.remove()
            bed.stop()
        }
        // Under the root, not named as an app unit.
        let plain = try bed.scopes.makeScope(name: "plain-1")
        try await bed.open("org.example.Plain", in: plain)
        // A sub-cgroup of an app scope.
        let unit = try bed.scopes.makeScope(name: "app-test-org.example.Sub-1.scope")
        let sub = try extra.make(unit.directory + "/sub")
        try await bed.sway.openWindow(appID: "org.example.Sub", inCgroup: sub)
        // Named as an app unit, beside the root rather than under it.
        let outside = try extra.make(String(bed.scopes.directory.dropLast("/app.slice".count)) + "/app-test-org.example.Out-1.scope")
        try await bed.sway.openWindow(appID: "org.example.Out", inCgroup: outside)
        let (_, scopeX) = try await bed.open("org.example.X")
        try await bed.open("org.example.B")
        try await bed.start()
        let log = WatcherLog(bed)
        let apps = ["org.example.Plain", "org.example.Sub", "org.example.Out"]
        for app in apps { #expect(log.waitFor(app, "background", reason: "no-app-unit", fromStart: true), "\(app)") }
        #expect(log.waitFor("org.example.X", "frozen", fromStart: true))
        for directory in [plain.directory, unit.directory, sub, outside] {
            #expect(!cgroupIsFrozen(directory), "\(directory)")
            #expect(freezeBit(directory) == "0", "\(directory)")
        }
        #expect(bed.listed == [scopeX.group])
        for app in apps { #expect(!log.states(of: app).contains("frozen"), "\(app)") }
    }

    @Test func aScopeSharedByTwoAppsIsFrozenOnlyWhenBothAreInTheBackground() async throws {
        let bed = try await LifecycleBed()
        defer { bed.stop() }
        try await bed.open("org.example.C")
        let (_, shared) = try await bed.open("org.example.A")
        try await bed.open("org.example.B", in: shared)
        try await bed.start()
        let log = WatcherLog(bed)
        #expect(log.waitFor("org.example.B", "foreground", fromStart: true))
        // A is past its delay, but B (in the same scope) is in front.
        #expect(log.waitFor("org.example.A", "background", reason: "shared", fromStart: true))
        #expect(!shared.isFrozen)
        #expect(!bed.listed.contains(shared.group))

        let background = ContinuousClock.now
        try await bed.sway.focus(appID: "org.example.C")
        #expect(await eventually(timeout: .seconds(6)) { shared.isFrozen })
        let frozenAfter = ContinuousClock.now - background
        #expect(frozenAfter >= Self.delay, "frozen \(frozenAfter) after both were in the background")
        #expect(frozenAfter < Self.delay + Self.lateness, "frozen \(frozenAfter) after both were in the background")
        #expect(log.read { lines in
            ["org.example.A", "org.example.B"].allSatisfy { app in lines.contains { isLifecycle($0, app, "frozen") } }
        })
        #expect(bed.listed == [shared.group])
        #expect(log.states(of: "org.example.A").filter { $0 == "frozen" }.count == 1)
        #expect(log.states(of: "org.example.B").suffix(2) == ["background", "frozen"])
    }

    /// A bed whose app `appID` runs in a scope of its own together with a session service,
    /// python-dbusmock's `template` owning `name` there, and goes to the background behind
    /// `org.example.B`: the bed, the app's scope, the service and the watcher's log. On a throw,
    /// what was started is stopped.
    private func serviceInTheScope(
        of appID: String, name: String, template: String, parameters: String? = nil
    ) async throws -> (bed: LifecycleBed<HeadlessSway>, scope: AppScopes.Scope, service: DBusMockProcess, log: WatcherLog) {
        let bed = try await LifecycleBed()
        var service: DBusMockProcess?
        do {
            try await bed.open("org.example.B")
            try await bed.start()
            let daemon = try #require(bed.daemon)
            let scope = try bed.scopes.makeScope(name: "app-test-\(appID)-1.scope")
            let started = try await DBusMockProcess(
                bus: daemon.session, template: template, name: name, parameters: parameters, group: scope.directory)
            service = started
            try await bed.open(appID, in: scope)
            try await bed.sway.focus(appID: "org.example.B")
            return (bed, scope, started, WatcherLog(bed))
        } catch {
            service?.process.terminate(signal: SIGKILL)
            bed.stop()
            throw error
        }
    }

    @Test func aScopeHoldingTheOwnerOfASessionServiceIsNeverFrozen() async throws {
        // The notification daemon (python-dbusmock's template) runs in P's scope.
        let (bed, scopeP, service, log) = try await serviceInTheScope(
            of: "org.example.P", name: "org.freedesktop.Notifications", template: "notification_daemon")
        defer { bed.stop() }
        defer { service.process.terminate(signal: SIGKILL) }
        try #require(log.waitFor("org.example.P", "background", reason: "protected", fromStart: true, timeout: .seconds(6)), "\(log.lines)")
        #expect(!scopeP.isFrozen)
        #expect(!bed.listed.contains(scopeP.group))
    }

    @Test func aScopeWithAPlayingMediaPlayerIsFrozenOnlyTheDelayAfterItStops() async throws {
        // An MPRIS player, playing, in M's scope.
        let (bed, scopeM, player, log) = try await serviceInTheScope(
            of: "org.example.M", name: "org.mpris.MediaPlayer2.test", template: Paths.fixtures + "/mpris_player.py",
            parameters: #"{"PlaybackStatus": "Playing"}"#)
        defer { bed.stop() }
        defer { player.process.terminate(signal: SIGKILL) }
        let daemon = try #require(bed.daemon)
        // (Required: a frozen player would not answer the pause below.)
        try #require(log.waitFor("org.example.M", "background", reason: "media", fromStart: true, timeout: .seconds(6)), "\(log.lines)")
        #expect(!scopeM.isFrozen)

        // Paused: frozen the delay after, not before.
        let control = try DBusClient(address: daemon.session.dbusAddress)
        defer { Task { await control.close() } }
        try await control.waitUntilConnected()
        let paused = ContinuousClock.now
        _ = try await control.call(
            destination: "org.mpris.MediaPlayer2.test", path: "/org/mpris/MediaPlayer2", interface: "org.freedesktop.DBus.Mock",
            member: "UpdateProperties", arguments: [.string("org.mpris.MediaPlayer2.Player"), .vardict([("PlaybackStatus", .string("Paused"))])])
        #expect(await eventually(timeout: .seconds(6)) { scopeM.isFrozen })
        let frozenAfter = ContinuousClock.now - paused
        #expect(frozenAfter >= Self.delay, "frozen \(frozenAfter) after the pause")
        #expect(frozenAfter < Self.delay + Self.lateness, "frozen \(frozenAfter) after the pause")
        #expect(log.waitFor("org.example.M", "frozen"))
    }

    @Test func aCgroupFrozenBySomeoneElseIsLeftAlone() async throws {
        let bed = try await LifecycleBed()
        defer { bed.stop() }
        let (_, scopeA) = try await bed.open("org.example.A")
        let (_, scopeC) = try await bed.open("org.example.C")
        try await bed.open("org.example.B")
        let writes = try FileWrites(scopeA.directory + "/cgroup.freeze")
        try await bed.start()
        let log = WatcherLog(bed)
        #expect(log.waitFor("org.example.A", "background", fromStart: true))
        // Frozen by the test before A's delay ends.
        try scopeA.setFrozen(true)
        #expect(await eventually(timeout: .seconds(2)) { scopeA.isFrozen })
        #expect(writes.count == 1)
        // C went to the background with A: its freeze is A's deadline passed.
        #expect(log.waitFor("org.example.C", "frozen", fromStart: true))
        #expect(log.states(of: "org.example.A") == ["background"])
        #expect(log.values(of: "org.example.A").last?["reason"] == .null)
        #expect(bed.listed == [scopeC.group])
        #expect(freezeBit(scopeA.directory) == "1")
        #expect(writes.count == 1)

        // Thawed by the test: notifybusd does not freeze it again, and never writes its file.
        try scopeA.setFrozen(false)
        #expect(writes.count == 2)
        #expect(await eventually(timeout: .seconds(2)) { !scopeA.isFrozen })
        // Another round past the delay: C in front, then back.
        try await bed.sway.focus(appID: "org.example.C")
        #expect(log.waitFor("org.example.C", "foreground"))
        try await bed.sway.focus(appID: "org.example.B")
        var seen: [String] = []
        let refrozen = await eventually(timeout: .seconds(6)) {
            seen.append(freezeBit(scopeA.directory) ?? "?")
            return scopeC.isFrozen
        }
        #expect(refrozen)
        #expect(log.waitFor("org.example.C", "frozen"))
        #expect(Set(seen) == ["0"], "A's cgroup.freeze read \(Set(seen))")
        #expect(!scopeA.isFrozen)
        #expect(writes.count == 2)
        #expect(bed.listed == [scopeC.group])
        #expect(!log.states(of: "org.example.A").contains("frozen"))
        #expect(log.values(of: "org.example.A").last?["reason"] == .null)
        #expect(bed.stopDaemon() == 0)
        #expect(writes.count == 2)
        #expect(freezeBit(scopeA.directory) == "0")
    }

    @Test func aCgroupFrozenOnlyThroughAnAncestorIsFrozenAndThawedByItsOwnBit() async throws {
        let bed = try await LifecycleBed()
        defer { bed.stop() }
        let (_, scopeA) = try await bed.open("org.example.A")
        try await bed.open("org.example.B")
        let rootWrites = try FileWrites(bed.scopes.directory + "/cgroup.freeze")
        try await bed.start()
        let log = WatcherLog(bed)
        #expect(log.waitFor("org.example.A", "background", fromStart: true))
        // The test freezes the root (app.slice): A is frozen through it, its own bit 0.
        try writeFile(bed.scopes.directory + "/cgroup.freeze", "1")
        #expect(await eventually(timeout: .seconds(2)) { scopeA.isFrozen })
        #expect(freezeBit(scopeA.directory) == "0")
        #expect(rootWrites.count == 1)
        // At its deadline the policy sets A's own bit; the kernel says frozen at once.
        #expect(log.waitFor("org.example.A", "frozen"))
        #expect(freezeBit(scopeA.directory) == "1")
        #expect(bed.listed == [scopeA.group])
        #expect(freezeBit(bed.scopes.directory) == "1")
        // In front again: only A's own bit is written back; it stays frozen through the root.
        try await bed.sway.focus(appID: "org.example.A")
        #expect(log.waitFor("org.example.A", "foreground"))
        #expect(await eventually(timeout: .seconds(1)) { freezeBit(scopeA.directory) == "0" })
        #expect(bed.listed.isEmpty)
        #expect(freezeBit(bed.scopes.directory) == "1")
        #expect(scopeA.isFrozen)
        #expect(rootWrites.count == 1)
        #expect(bed.stopDaemon() == 0)
        #expect(freezeBit(bed.scopes.directory) == "1")
        #expect(rootWrites.count == 1)
        try writeFile(bed.scopes.directory + "/cgroup.freeze", "0")
        #expect(await eventually(timeout: .seconds(2)) { !scopeA.isFrozen })
    }

    @Test func anAppIDIsOneSegmentOfItsKey() async throws {
        let bed = try await LifecycleBed()
        defer { bed.stop() }
        let scope = try bed.scopes.makeScope(name: "app-test-slash-1.scope")
        // The bed logs foot to `foot-<app id>.log` in sway's directory: the id's `/` makes a folder.
        #expect(mkdir(bed.sway.runtimeDirectory + "/foot-org.example", 0o755) == 0)
        try await bed.open("org.example/A%B", in: scope)
        try await bed.open("org.example.B")
        try await bed.start()
        let log = WatcherLog(bed)
        #expect(log.waitFor("org.example%2FA%25B", "frozen", fromStart: true), "\(log.lines)")
        #expect(scope.isFrozen)
        #expect(log.states(of: "org.example%2FA%25B") == ["background", "frozen"])
    }

    // MARK: When an app is thawed

    @Test func aLostCompositorIsTriedAgainAfterASecond() async throws {
        let bed = try await LifecycleBed()
        let second = try await HeadlessSway()
        defer {
            second.stop()
            bed.stop()
        }
        // The daemon's SWAYSOCK is a link: to the first sway, then to the second.
        let link = bed.runtime + "/sway.sock"
        #expect(symlink(bed.sway.ipcSocket, link) == 0)
        try await bed.open("org.example.A")
        try await bed.start(environment: ["SWAYSOCK": link])
        let log = WatcherLog(bed)
        #expect(log.waitFor("org.example.A", "foreground", fromStart: true))
        #expect(log.lines.contains { isSource($0, "running") })
        let mark = log.lines.count
        let lost = ContinuousClock.now
        kill(bed.sway.pid, SIGKILL)
        #expect(symlink(second.ipcSocket, link + ".new") == 0 && rename(link + ".new", link) == 0)
        #expect(log.read(timeout: .seconds(10)) { lines in lines[mark...].contains { isSource($0, "running") } })
        let back = ContinuousClock.now - lost
        #expect(back >= .milliseconds(900) && back < .seconds(2), "running again \(back) after the loss: \(log.lines[mark...])")
        let unavailable = log.lines[mark...].filter { isSource($0, "unavailable") }
        #expect(unavailable.count == 1 && unavailable.first?["reason"]?.stringValue?.contains("lost") == true, "\(log.lines[mark...])")
        // The second sway's windows are followed.
        let scopeC = try bed.scopes.makeScope(name: "app-test-org.example.C-1.scope")
        let scopeD = try bed.scopes.makeScope(name: "app-test-org.example.D-1.scope")
        try await second.openWindow(appID: "org.example.C", inCgroup: scopeC.directory)
        try await second.openWindow(appID: "org.example.D", inCgroup: scopeD.directory)
        #expect(log.waitFor("org.example.D", "foreground", fromStart: true))
        #expect(log.waitFor("org.example.C", "frozen", fromStart: true))
        #expect(scopeC.isFrozen && !scopeD.isFrozen)
        #expect(log.states(of: "org.example.A") == ["foreground", "closed"])
    }

    @Test func theLockedSessionFreezesTheForegroundAppAndTheUnlockThawsIt() async throws {
        let bed = try await LifecycleBed()
        defer { bed.stop() }
        let (_, scopeB) = try await bed.open("org.example.B")
        let (_, scopeA) = try await bed.open("org.example.A")
        try await bed.start(["--freeze-delay", "2", "--source", "login"])
        let daemon = try #require(bed.daemon)
        let logind = try await MockService(bus: daemon.system, template: Paths.fixtures + "/logind_session.py", name: "org.freedesktop.login1")
        defer { logind.process.terminate() }
        let lock = try daemon.notifywatch(["session/locked"])
        defer { kill(lock.pid, SIGTERM); lock.waitForExit(timeout: .seconds(5)) }
        #expect(daemon.lines(of: lock, until: { isNotification($0, "session/locked", false) }) != nil)
        let log = WatcherLog(bed)
        #expect(log.waitFor("org.example.A", "foreground", fromStart: true))

        let locked = ContinuousClock.now
        try await setLockedHint(daemon, true)
        #expect(daemon.lines(of: lock, until: { isNotification($0, "session/locked", true) }) != nil)
        #expect(log.waitFor("org.example.A", "background", reason: .some(nil)))
        #expect(await eventually(timeout: .seconds(6)) { scopeA.isFrozen })
        let frozenAfter = ContinuousClock.now - locked
        #expect(frozenAfter >= Self.delay, "frozen \(frozenAfter) after the lock")
        #expect(frozenAfter < Self.delay + Self.lateness, "frozen \(frozenAfter) after the lock")
        #expect(log.waitFor("org.example.A", "frozen"))
        #expect(log.waitFor("org.example.B", "frozen", fromStart: true))
        #expect(Set(bed.listed) == [scopeA.group, scopeB.group])

        let unlocked = ContinuousClock.now
        try await setLockedHint(daemon, false)
        #expect(await eventually(timeout: .seconds(2)) { !scopeA.isFrozen })
        let thawedAfter = ContinuousClock.now - unlocked
        #expect(thawedAfter < .milliseconds(500), "thawed \(thawedAfter) after the unlock")
        #expect(log.waitFor("org.example.A", "foreground"))
        #expect(log.states(of: "org.example.A") == ["foreground", "background", "frozen", "foreground"])
        // The app in the background stays frozen: the unlock activates nothing of it.
        #expect(scopeB.isFrozen)
        #expect(log.states(of: "org.example.B") == ["background", "frozen"])
        #expect(log.hasNoRepeats)
        #expect(bed.listed == [scopeB.group])
    }

    @Test func sigintThawsEverythingAndExitsZero() async throws {
        let bed = try await LifecycleBed()
        defer { bed.stop() }
        let (_, scopeA) = try await bed.open("org.example.A")
        let (_, scopeC) = try await bed.open("org.example.C")
        try await bed.open("org.example.B")
        try await bed.start()
        let log = WatcherLog(bed)
        #expect(log.read { lines in
            ["org.example.A", "org.example.C"].allSatisfy { app in lines.contains { isLifecycle($0, app, "frozen") } }
        })
        #expect(scopeA.isFrozen && scopeC.isFrozen)
        let daemonLog = bed.daemon?.log ?? ""
        let status = bed.stopDaemon(SIGINT)
        #expect(status == 0, "\(readFile(daemonLog) ?? "")")
        #expect(freezeBit(scopeA.directory) == "0" && freezeBit(scopeC.directory) == "0")
        #expect(await eventually(timeout: .seconds(1)) { !scopeA.isFrozen && !scopeC.isFrozen })
        #expect(bed.listed.isEmpty)
    }

    // MARK: The lifecycle source

    @Test func theLifecycleSourceIsRunningAbsentOrUnavailableWithItsReason() async throws {
        // Without --freeze-background: absent, even when chosen with --source.
        for arguments in [[], ["--source", "lifecycle"], ["--source", "lifecycle", "--freeze-background", "--no-source", "lifecycle"]] {
            let sources = try await sourceLines(arguments: arguments)
            #expect(sources["network"] != nil, "\(arguments): \(sources)")
            #expect(sources["lifecycle"] == nil, "\(arguments): \(sources)")
        }

        let runtime = try makeTemporaryDirectory("lifecycle-source")
        defer { removeTree(runtime) }
        let config = runtime + "/lifecycle.conf"
        // The cgroup root in the config does not exist.
        try writeFile(config, "cgroup-root = /nb-life-missing-\(getpid())/user@0.service/app.slice\n")
        let missingRoot = try await sourceLines(
            arguments: ["--source", "lifecycle", "--freeze-background", "--freeze-delay", "2", "--toplevels", "sway", "--freeze-config", config],
            environment: ["XDG_RUNTIME_DIR": runtime])
        #expect(missingRoot["lifecycle"]?["status"]?.stringValue == "unavailable", "\(missingRoot)")
        #expect(missingRoot["lifecycle"]?["reason"]?.stringValue?.contains("nb-life-missing") == true, "\(missingRoot)")

        // sway's socket points nowhere.
        let scopes = try SwayBedEnvironment.appScopes()
        defer { scopes.remove() }
        try writeFile(config, "cgroup-root = \(scopes.root)\n")
        let noSway = try await sourceLines(
            arguments: ["--source", "lifecycle", "--freeze-background", "--freeze-delay", "2", "--toplevels", "sway", "--freeze-config", config],
            environment: ["XDG_RUNTIME_DIR": runtime, "SWAYSOCK": runtime + "/sway-ipc.nowhere.sock"])
        #expect(noSway["lifecycle"]?["status"]?.stringValue == "unavailable", "\(noSway)")
        #expect(noSway["lifecycle"]?["reason"]?.stringValue?.isEmpty == false, "\(noSway)")
        #expect(readFile(runtime + "/notifybus/frozen") ?? "" == "")

        // With the feature and a sway: running.
        let bed = try await LifecycleBed()
        defer { bed.stop() }
        try await bed.open("org.example.A")
        try await bed.start()
        #expect(bed.lifecycleSource()?["status"]?.stringValue == "running")
    }

    /// The `source` lines (by source) that `notifywatch --daemon` prints at its start for a
    /// daemon run with `arguments`: those before its first value (`network/connectivity`).
    private func sourceLines(arguments: [String], environment: [String: String?] = [:]) async throws -> [String: JSONValue] {
        let daemon = try await DaemonBed(arguments: arguments, environment: environment)
        defer { _ = daemon.daemon.terminate() }
        let watcher = try daemon.notifywatch(["network/connectivity"])
        defer { kill(watcher.pid, SIGTERM); watcher.waitForExit(timeout: .seconds(5)) }
        let lines = daemon.lines(of: watcher, until: { $0["type"]?.stringValue == "notification" }) ?? []
        var sources: [String: JSONValue] = [:]
        for line in lines where line["type"]?.stringValue == "source" {
            if let name = line["source"]?.stringValue { sources[name] = line }
        }
        return sources
    }
}

// MARK: Helpers

/// Everything the bed's watcher printed, kept as it is read, and read on demand.
final class WatcherLog {
    let bed: any LifecycleWatched
    private(set) var lines: [JSONValue] = []
    /// Where `waitFor` looks from: just past its last match.
    private var cursor = 0

    init(_ bed: any LifecycleWatched) { self.bed = bed }

    /// Reads lines until `done` holds of all the lines read so far (at once if it does).
    @discardableResult
    func read(timeout: Duration = .seconds(20), until done: ([JSONValue]) -> Bool) -> Bool {
        if done(lines) { return true }
        guard let daemon = bed.daemon, let watcher = bed.watcher else { return false }
        return daemon.lines(of: watcher, until: { line in
            lines.append(line)
            return done(lines)
        }, timeout: timeout) != nil
    }

    /// Waits for a line of `appID`'s key with `state` (and `reason`, when given: `.some(nil)` for
    /// `null`), after the last line `waitFor` matched, or among all lines with `fromStart`.
    func waitFor(_ appID: String, _ state: String, reason: String?? = nil, fromStart: Bool = false, timeout: Duration = .seconds(20)) -> Bool {
        let start = fromStart ? 0 : cursor
        let matches = { (line: JSONValue) in
            guard isLifecycle(line, appID, state) else { return false }
            guard let reason else { return true }
            return line["value"]?["reason"] == (reason.map { JSONValue.string($0) } ?? .null)
        }
        guard read(timeout: timeout, until: { lines in lines[min(start, lines.count)...].contains(where: matches) }) else { return false }
        if let index = lines[start...].firstIndex(where: matches) { cursor = max(cursor, index + 1) }
        return true
    }

    /// The values of `appID`'s key read so far, in order.
    func values(of appID: String) -> [JSONValue] {
        lines.filter { $0["type"]?.stringValue == "notification" && $0["key"]?.stringValue == "app/\(appID)/lifecycle" }
            .compactMap { $0["value"] }
    }

    /// Whether no app's key had the same value twice in a row.
    var hasNoRepeats: Bool {
        var last: [String: JSONValue] = [:]
        for line in lines where line["type"]?.stringValue == "notification" {
            guard let key = line["key"]?.stringValue, let value = line["value"] else { continue }
            if last[key] == value { return false }
            last[key] = value
        }
        return true
    }

    /// The states of `appID`'s key read so far, in order.
    func states(of appID: String) -> [String] { values(of: appID).compactMap { $0["state"]?.stringValue } }
}

/// Whether `line` is a notification of `appID`'s lifecycle key with `state`.
func isLifecycle(_ line: JSONValue, _ appID: String, _ state: String) -> Bool {
    line["type"]?.stringValue == "notification" && line["key"]?.stringValue == "app/\(appID)/lifecycle"
        && line["value"]?["state"]?.stringValue == state
}

/// Whether `line` is a `source` line of `lifecycle` with `status`.
func isSource(_ line: JSONValue, _ status: String) -> Bool {
    line["type"]?.stringValue == "source" && line["source"]?.stringValue == "lifecycle" && line["status"]?.stringValue == status
}

/// Whether `line` is a notification of `key` with `value`.
func isNotification(_ line: JSONValue, _ key: String, _ value: JSONValue) -> Bool {
    line["type"]?.stringValue == "notification" && line["key"]?.stringValue == key && line["value"] == value
}

/// What the cgroup's own `cgroup.freeze` says (`"0"` or `"1"`).
func freezeBit(_ directory: String) -> String? {
    readFile(directory + "/cgroup.freeze").map { $0.trimmingCharacters(in: "\n ") }
}

/// The permission bits of `path`.
func fileMode(_ path: String) -> mode_t? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return info.st_mode & 0o7777
}

/// Whether the cgroup's `cgroup.events` says `frozen 1`.
func cgroupIsFrozen(_ directory: String) -> Bool {
    (readFile(directory + "/cgroup.events") ?? "").split(separator: "\n").contains("frozen 1")
}

/// Sets the `LockedHint` of the session of Fixtures/logind_session.py.
func setLockedHint(_ daemon: DaemonBed, _ locked: Bool) async throws {
    _ = try await daemon.control.call(
        destination: "org.freedesktop.login1", path: "/org/freedesktop/login1/session/c1",
        interface: "org.freedesktop.login1.Session", member: "SetLockedHint", arguments: [.boolean(locked)])
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var result = Substring(self)
        while let first = result.first, set.contains(first) { result = result.dropFirst() }
        while let last = result.last, set.contains(last) { result = result.dropLast() }
        return String(result)
    }
}

/// Cgroups a test makes outside what `AppScopes` makes (a sub-cgroup of a scope, a group beside
/// the root), removed before the tree: thawed, emptied into the mount's root group, removed.
final class ExtraGroups {
    let scopes: AppScopes
    private var made: [String] = []

    init(_ scopes: AppScopes) { self.scopes = scopes }

    /// Makes the cgroup directory `path`.
    func make(_ path: String) throws -> String {
        guard mkdir(path, 0o755) == 0 else { throw HarnessError("mkdir \(path): errno \(errno)") }
        made.append(path)
        return path
    }

    /// Thaws, empties and removes every group made, deepest first.
    func remove() {
        for path in made.reversed() {
            try? writeFile(path + "/cgroup.freeze", "0")
            for pid in (readFile(path + "/cgroup.procs") ?? "").split(separator: "\n") {
                try? writeFile(scopes.mountPoint + "/cgroup.procs", String(pid))
            }
            for _ in 0..<200 {
                if rmdir(path) == 0 || errno == ENOENT { break }
                usleep(10_000)
            }
        }
        made = []
    }
}

/// Counts the writes to one file (inotify `IN_MODIFY`: every `write` that wrote something, by
/// anyone).
final class FileWrites {
    private let fd: Int32
    private var seen = 0

    init(_ path: String) throws {
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw HarnessError("inotify_init1: errno \(errno)") }
        guard inotify_add_watch(fd, path, UInt32(IN_MODIFY)) >= 0 else {
            let code = errno
            close(fd)
            throw HarnessError("inotify_add_watch \(path): errno \(code)")
        }
    }

    deinit { close(fd) }

    /// The writes so far.
    var count: Int {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fd, &buffer, buffer.count)
            guard n > 0 else { break }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= n {
                let (mask, length) = buffer.withUnsafeBytes { raw in
                    (raw.load(fromByteOffset: offset + 4, as: UInt32.self), raw.load(fromByteOffset: offset + 12, as: UInt32.self))
                }
                if mask & UInt32(IN_MODIFY) != 0 { seen += 1 }
                offset += MemoryLayout<inotify_event>.size + Int(length)
            }
        }
        return seen
    }
}
