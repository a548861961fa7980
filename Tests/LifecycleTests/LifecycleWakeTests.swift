import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// "Woken when something needs the app" (the article Freezing background apps), end to end: the
/// real notifybusd against a headless sway, with a real GApplication (`Fixtures/gtk_app.py`, a
/// `Gtk.Application` whose id is its bus name and its window's app id) in an app scope, reached
/// by GLib's own `gapplication` and `gdbus` while it is frozen.
@Suite(.serialized, .enabled(if: SwayBedEnvironment.testsRun)) struct LifecycleWakeTests {
    static let mail = "org.example.Mail"

    /// The daemon (`--freeze-delay 2 --freeze-wake-grace GRACE` and `arguments`), the app `mail`
    /// in a scope of its own and a foot window focused over it, once the app is frozen.
    /// `meanwhile` runs once the app runs, before it goes to the background.
    static func frozenApp(
        grace: Int = 3, _ arguments: [String] = [], meanwhile: (LifecycleBed<HeadlessSway>, AppScopes.Scope) async throws -> Void = { _, _ in }
    ) async throws -> (LifecycleBed<HeadlessSway>, WatcherLog, HeadlessSway.Window, AppScopes.Scope) {
        let bed = try await LifecycleBed()
        do {
            try await bed.start(["--freeze-delay", "2", "--freeze-wake-grace", "\(grace)"] + arguments)
            let (app, scope) = try await bed.openApp(mail)
            try await meanwhile(bed, scope)
            try await bed.open("org.example.B")
            try await bed.sway.focus(appID: "org.example.B")
            let log = WatcherLog(bed)
            #expect(log.waitFor(mail, "frozen", fromStart: true))
            #expect(scope.isFrozen)
            return (bed, log, app, scope)
        } catch {
            bed.stop()
            throw error
        }
    }

    /// Runs GLib's `gapplication` with `arguments` on the daemon's session bus; how long it took.
    static func gapplication(_ bed: LifecycleBed<HeadlessSway>, _ arguments: [String]) async throws -> Duration {
        let started = ContinuousClock.now
        _ = try await runCommand(
            "/usr/bin/gapplication", arguments, environment: try #require(bed.daemon).session.environment(), timeout: .seconds(10))
        return ContinuousClock.now - started
    }

    /// The app's next line that ends with `what`, within `timeout`.
    static func appSays(_ app: HeadlessSway.Window, _ what: String, timeout: Duration = .seconds(10)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let line = app.process.readLine(timeout: deadline - ContinuousClock.now) else { return false }
            if line.hasSuffix(" " + what) { return true }
        }
        return false
    }

    @Test func anActionAndALaunchOfAFrozenAppAreAnsweredAndItComesBackToTheForeground() async throws {
        let (bed, log, app, scope) = try await Self.frozenApp()
        defer { bed.stop() }
        // `gapplication action` is org.freedesktop.Application.ActivateAction: answered at once.
        let took = try await Self.gapplication(bed, ["action", Self.mail, "ping"])
        #expect(took < .seconds(2), "gapplication action took \(took)")
        #expect(Self.appSays(app, "action ping"))
        #expect(log.waitFor(Self.mail, "background", reason: "woken"))
        #expect(!scope.isFrozen)
        // Frozen again after its grace, without a window activated.
        #expect(log.waitFor(Self.mail, "frozen", timeout: .seconds(8)))
        #expect(scope.isFrozen)
        // `gapplication launch` is Activate: the app raises its window itself, and is in front.
        let launched = try await Self.gapplication(bed, ["launch", Self.mail])
        #expect(launched < .seconds(2), "gapplication launch took \(launched)")
        #expect(Self.appSays(app, "activated"))
        #expect(log.waitFor(Self.mail, "foreground"))
        #expect(!scope.isFrozen)
        #expect(log.hasNoRepeats)
    }

    @Test func aUnicastSignalThawsTheAppABroadcastOneDoesNot() async throws {
        let (bed, log, app, scope) = try await Self.frozenApp()
        defer { bed.stop() }
        let unique = try #require(try await Self.uniqueName(of: Self.mail, bed))
        let environment = try #require(bed.daemon).session.environment()
        let emit = ["emit", "--session", "--object-path", "/org/notifybus/Test", "--signal", "org.notifybus.Test.Ping"]
        _ = try await runCommand("/usr/bin/gdbus", emit, environment: environment)
        try await Task.sleep(for: .seconds(1))
        #expect(scope.isFrozen, "a broadcast signal thawed the app")
        _ = try await runCommand("/usr/bin/gdbus", emit + ["--dest", unique], environment: environment)
        #expect(await eventually(timeout: .seconds(2)) { !scope.isFrozen })
        #expect(log.waitFor(Self.mail, "background", reason: "woken"))
        // The bus held both for it: the broadcast one too, now delivered.
        #expect(Self.appSays(app, "signal Ping"))
        #expect(Self.appSays(app, "signal Ping"))
    }

    @Test func aReplyToACallMadeBeforeTheFreezeDoesNotThaw() async throws {
        let bed = try await LifecycleBed()
        defer { bed.stop() }
        try await bed.start(["--freeze-delay", "2"])
        let service = try bed.launch(
            ["/usr/bin/python3", Paths.fixtures + "/delayed_reply_service.py", "org.notifybus.Test.Slow", "4"], in: nil, log: "slow")
        defer { service.terminate(signal: SIGKILL) }
        #expect(service.readLine(timeout: .seconds(10)) == "ready")
        let (app, scope) = try await bed.openApp(Self.mail)
        try await bed.open("org.example.B")
        try await bed.sway.focus(appID: "org.example.B")
        _ = try await Self.gapplication(bed, ["action", Self.mail, "call-slow", "'org.notifybus.Test.Slow'"])
        #expect(Self.appSays(app, "called"))
        let log = WatcherLog(bed)
        #expect(log.waitFor(Self.mail, "frozen", fromStart: true))
        // The answer leaves the service while the app is frozen: it stays so.
        #expect(service.readLine(timeout: .seconds(6))?.hasSuffix("answered") == true)
        var thawed = false
        for _ in 0..<20 {
            try await Task.sleep(for: .milliseconds(50))
            thawed = thawed || !scope.isFrozen
        }
        #expect(!thawed, "a reply thawed the app")
        // In front again, it reads the answer the bus held.
        try await bed.sway.focus(appID: Self.mail)
        #expect(Self.appSays(app, "reply"))
    }

    @Test func aSecondMessageWithinTheGraceRestartsItAndNotifybusdsOwnMessagesNeverThaw() async throws {
        // A subscriber of the daemon in the app's scope that does not follow the freezer: the
        // daemon's own Events to it never wake the app.
        var client: ChildProcess?
        let (bed, log, _, scope) = try await Self.frozenApp(grace: 3) { bed, scope in
            client = try #require(bed.daemon).pythonClient(["network/**", "--no-follow-freezer"], in: scope.directory).process
        }
        defer {
            client?.terminate(signal: SIGKILL)
            bed.stop()
        }
        let daemon = try #require(bed.daemon)
        #expect(scope.isFrozen)
        for state in [UInt32(2), 3, 4] {
            try await daemon.setConnectivity(state)
            try await Task.sleep(for: .milliseconds(300))
        }
        #expect(scope.isFrozen, "the daemon's own Events thawed the app")
        _ = try await Self.gapplication(bed, ["action", Self.mail, "ping"])
        #expect(log.waitFor(Self.mail, "background", reason: "woken"))
        let woken = ContinuousClock.now
        try await Task.sleep(for: .seconds(2))
        // Taken before the call: the daemon sees the message before gapplication exits.
        let second = ContinuousClock.now
        _ = try await Self.gapplication(bed, ["action", Self.mail, "ping"])
        // Past the first message's grace, not the second's: still running.
        try await Task.sleep(until: woken + .seconds(3) + .milliseconds(700))
        #expect(!scope.isFrozen, "frozen 3 s after the first message, though a second came 2 s after it")
        #expect(log.waitFor(Self.mail, "frozen", timeout: .seconds(6)))
        let refrozen = ContinuousClock.now - second
        #expect(refrozen >= .seconds(3) && refrozen < .seconds(5), "frozen \(refrozen) after the second message")
    }

    @Test func aMonitorTheBusRefusesFreezesNothing() async throws {
        let bed = try await LifecycleBed()
        defer { bed.stop() }
        let (_, scopeA) = try await bed.open("org.example.A")
        try await bed.open("org.example.B")
        try await bed.start(sessionConfiguration: """
            <policy context="mandatory">
              <deny send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Monitoring"/>
            </policy>
            """)
        let source = try #require(bed.lifecycleSource())
        #expect(source["status"]?.stringValue == "unavailable")
        #expect(source["reason"]?.stringValue?.contains("monitor") == true, "\(source)")
        try await Task.sleep(for: .seconds(4))
        #expect(!scopeA.isFrozen)
        #expect(bed.listed.isEmpty)
    }

    @Test func aMonitorConnectionClosedUnderItThawsEverything() async throws {
        let (bed, log, _, scope) = try await Self.frozenApp(grace: 30)
        defer { bed.stop() }
        let daemon = try #require(bed.daemon)
        // The monitor is the daemon's second connection to the session bus: shut it down from
        // inside the daemon's process, as the bus closing it would.
        let sockets = try await Self.busSockets(of: daemon.daemon.pid, bus: daemon.session)
        #expect(sockets.count == 2, "the daemon's connections to the session bus: \(sockets)")
        let monitor = try #require(sockets.max())
        _ = try await runCommand(
            "/usr/bin/gdb", ["-p", "\(daemon.daemon.pid)", "-batch", "-ex", "call (int)shutdown(\(monitor), 2)"],
            environment: ["PATH": "/usr/bin:/bin"], timeout: .seconds(20))
        #expect(await eventually(timeout: .seconds(2)) { !scope.isFrozen })
        #expect(log.waitFor(Self.mail, "background", reason: "woken"))
    }

    @Test func theMonitorIsThereOnlyWhileAnAppIsHeldAndLargeCallsToAFrozenAppAreBounded() async throws {
        var idle = 0
        var before: [Int32] = []
        let (bed, log, app, scope) = try await Self.frozenApp(grace: 2) { bed, _ in
            let daemon = try #require(bed.daemon)
            before = try await Self.busSockets(of: daemon.daemon.pid, bus: daemon.session)
            idle = Self.kibibytes("VmRSS", of: daemon.daemon.pid)
        }
        defer { bed.stop() }
        let daemon = try #require(bed.daemon)
        // Nothing frozen: no monitor; the app frozen: one.
        #expect(before.count == 1, "the daemon's connections to the session bus before any freeze: \(before)")
        #expect(try await Self.busSockets(of: daemon.daemon.pid, bus: daemon.session).count == 2)
        // Five calls of 20 MiB each to the frozen app: the monitor is given a copy of each, and
        // the daemon stays within the bound of a received message (idle + 32 MiB + twice it).
        let megabytes = 20
        let flood = """
            from gi.repository import Gio, GLib
            bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
            # Made from bytes at once (a tuple of Python ints would take a minute).
            data = GLib.Variant.new_from_bytes(GLib.VariantType.new("ay"), GLib.Bytes.new(bytes(\(megabytes) << 20)), True)
            body = GLib.Variant.new_tuple(data)
            for _ in range(5):
                try:
                    bus.call_sync("\(Self.mail)", "/", "org.notifybus.Test", "Large", body, None, Gio.DBusCallFlags.NONE, 20000, None)
                except GLib.Error:
                    pass
            print("sent", flush=True)
            """
        _ = try await runCommand("/usr/bin/python3", ["-c", flood], environment: daemon.session.environment(), timeout: .seconds(60))
        #expect(!scope.isFrozen)
        let peak = Self.kibibytes("VmHWM", of: daemon.daemon.pid)
        let bound = idle + 32 * 1024 + 2 * megabytes * 1024
        #expect(peak <= bound, "peak \(peak) KiB past \(bound) KiB (idle \(idle) KiB)")
        #expect(log.waitFor(Self.mail, "background", reason: "woken", fromStart: true))
        // In front: no app is held, and the monitor is gone.
        try await bed.sway.focus(appID: Self.mail)
        #expect(log.waitFor(Self.mail, "foreground"))
        #expect(await eventually(timeout: .seconds(2)) {
            (try? await Self.busSockets(of: daemon.daemon.pid, bus: daemon.session).count) == 1
        })
        _ = app
    }

    /// The field `name` of `/proc/PID/status`, in KiB.
    static func kibibytes(_ name: String, of pid: Int32) -> Int {
        let line = (readFile("/proc/\(pid)/status") ?? "").split(separator: "\n").first { $0.hasPrefix(name + ":") }
        return line.flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") } ?? 0
    }

    // MARK: Thawed by someone else

    @Test func aThawBySomeoneElseIsSeenAndTheAppFrozenAgainAfterTheGrace() async throws {
        let (bed, log, _, scope) = try await Self.frozenApp(grace: 2)
        defer { bed.stop() }
        let thawed = ContinuousClock.now
        try scope.setFrozen(false)
        #expect(log.waitFor(Self.mail, "background", reason: "woken"))
        #expect(ContinuousClock.now - thawed < .seconds(1))
        #expect(log.waitFor(Self.mail, "frozen", timeout: .seconds(6)))
        let refrozen = ContinuousClock.now - thawed
        #expect(refrozen >= .seconds(2) && refrozen < .seconds(4), "frozen again \(refrozen) after the thaw")
        #expect(scope.isFrozen)
        #expect(bed.listed == [scope.group])
    }

    @Test func aProcessOfAFrozenAppDyingIsNotAThaw() async throws {
        let bed = try await LifecycleBed()
        defer { bed.stop() }
        try await bed.start(["--freeze-delay", "2"])
        let (_, scope) = try await bed.openApp(Self.mail)
        // Three more processes of the app, one of them holding 64 MiB.
        var helpers: [ChildProcess] = []
        for command in [["/bin/sleep", "600"], ["/bin/sleep", "600"], ["/usr/bin/python3", "-c", "b = bytearray(64 << 20)\nimport time\ntime.sleep(600)"]] {
            helpers.append(try bed.launch(command, in: scope, log: "helper"))
        }
        defer { for helper in helpers { helper.terminate(signal: SIGKILL) } }
        try await Task.sleep(for: .milliseconds(500))
        try await bed.open("org.example.B")
        try await bed.sway.focus(appID: "org.example.B")
        let log = WatcherLog(bed)
        #expect(log.waitFor(Self.mail, "frozen", fromStart: true))
        for helper in helpers.reversed() {
            kill(helper.pid, SIGKILL)
            _ = helper.waitForExit(timeout: .seconds(5))
            try await Task.sleep(for: .milliseconds(300))
            #expect(scope.isFrozen, "the app is not frozen after one of its processes died")
        }
        // Nothing was published: it stayed frozen.
        _ = log.read(timeout: .seconds(1)) { _ in false }
        #expect(log.states(of: Self.mail).last == "frozen")
        #expect(freezeBit(scope.directory) == "1")
    }

    // MARK: Helpers

    /// The unique name owning `name` on the daemon's session bus.
    static func uniqueName(of name: String, _ bed: LifecycleBed<HeadlessSway>) async throws -> String? {
        let output = try await runCommand(
            "/usr/bin/gdbus",
            ["call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
             "--method", "org.freedesktop.DBus.GetNameOwner", name],
            environment: try #require(bed.daemon).session.environment())
        return output.split(separator: "'").dropFirst().first.map(String.init)
    }

    /// The descriptors of `pid` that are Unix sockets connected to `bus`'s socket, as `ss -xpn`
    /// lists them: the bus's ends have its socket's path as their address, and each of the
    /// process's sockets names its peer's inode.
    static func busSockets(of pid: Int32, bus: PrivateBus) async throws -> [Int32] {
        let path = String(bus.address.dropFirst("unix:path=".count))
        let table = try await runCommand("/usr/bin/ss", ["-xpn"], environment: ["PATH": "/usr/bin:/bin"])
        let rows = table.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        let busEnds = Set(rows.filter { $0.count >= 8 && $0[4] == path }.map { $0[5] })
        var found: [Int32] = []
        for row in rows where row.count >= 9 && busEnds.contains(row[7]) {
            guard let users = row.last, users.contains("pid=\(pid),"), let fd = users.split(separator: "fd=").last?.prefix(while: \.isNumber)
            else { continue }
            if let number = Int32(fd) { found.append(number) }
        }
        return found.sorted()
    }
}
