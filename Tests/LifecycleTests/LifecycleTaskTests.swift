import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// "Background time" (the article Freezing background apps), end to end: `org.notifybus.Lifecycle1`
/// of the real notifybusd, called by the Python example (`Examples/python/notifybus-background-task.py`)
/// and the Swift client's (`BackgroundTaskExample`), each run inside the app's scope as an app's
/// own process would, against a headless sway.
@Suite(.serialized, .enabled(if: SwayBedEnvironment.testsRun)) struct LifecycleTaskTests {
    static let script = Paths.fixtures + "/../../../Examples/python/notifybus-background-task.py"

    /// The daemon (`--freeze-delay 2` and `arguments`), A's window in a scope of its own, and B's,
    /// focused unless `focusB` is false.
    static func bed(_ arguments: [String] = [], focusB: Bool = true) async throws -> (LifecycleBed<HeadlessSway>, AppScopes.Scope) {
        let bed = try await LifecycleBed()
        do {
            try await bed.start(["--freeze-delay", "2"] + arguments)
            let (_, scope) = try await bed.open("org.example.A")
            try await bed.open("org.example.B")
            if !focusB { try await bed.sway.focus(appID: "org.example.A") }
            return (bed, scope)
        } catch {
            bed.stop()
            throw error
        }
    }

    /// The Python example with `arguments` in `scope` (outside any app unit without one).
    static func task(_ bed: LifecycleBed<HeadlessSway>, _ arguments: [String], in scope: AppScopes.Scope?) throws -> ChildProcess {
        try bed.launch(["/usr/bin/python3", script] + arguments, in: scope, log: "background-task")
    }

    /// The example's next JSON line of `type`, within `timeout`.
    static func line(_ process: ChildProcess, _ type: String, timeout: Duration = .seconds(10)) -> JSONValue? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, let text = process.readLine(timeout: deadline - ContinuousClock.now) {
            guard let line = try? JSONValue(parsing: text) else { continue }
            if line["type"]?.stringValue == type { return line }
        }
        return nil
    }

    @Test func anOpenTaskKeepsTheAppRunningAndItsEndFreezesItAtOnce() async throws {
        let (bed, scope) = try await Self.bed()
        defer { bed.stop() }
        let task = try Self.task(bed, ["--seconds", "5", "--reason", "sending the outbox"], in: scope)
        defer { task.terminate(signal: SIGKILL) }
        let granted = try #require(Self.line(task, "task"))
        #expect(granted["seconds"] == 30)
        let log = WatcherLog(bed)
        #expect(log.waitFor("org.example.A", "background", reason: "task", fromStart: true))
        #expect(!scope.isFrozen)
        #expect(Self.line(task, "ended") != nil)
        let ended = ContinuousClock.now
        #expect(log.waitFor("org.example.A", "frozen", timeout: .seconds(3)))
        #expect(ContinuousClock.now - ended < .milliseconds(1500), "frozen \(ContinuousClock.now - ended) after the task ended")
        // The reason is in the daemon's log, not on the bus.
        #expect(readFile(try #require(bed.daemon).log)?.contains("sending the outbox") == true)
        #expect(!log.lines.contains { "\($0)".contains("sending the outbox") })
    }

    @Test func theConnectionIsToldFiveSecondsBeforeTheGrantRunsOutThenTheAppIsFrozen() async throws {
        let (bed, scope) = try await Self.bed(["--freeze-task-limit", "7"], focusB: false)
        defer { bed.stop() }
        let task = try Self.task(bed, ["--seconds", "0"], in: scope)
        defer { task.terminate(signal: SIGKILL) }
        #expect(try #require(Self.line(task, "task"))["seconds"] == 7)
        try await bed.sway.focus(appID: "org.example.B")
        let left = ContinuousClock.now
        let warning = try #require(Self.line(task, "expiring"))
        let warnedAfter = ContinuousClock.now - left
        #expect(warning["seconds"] == 5)
        #expect(warnedAfter > .milliseconds(1500) && warnedAfter < .seconds(3), "warned \(warnedAfter) after leaving the foreground")
        let log = WatcherLog(bed)
        #expect(log.waitFor("org.example.A", "frozen", fromStart: true, timeout: .seconds(10)))
        let frozenAfter = ContinuousClock.now - left
        #expect(frozenAfter > .milliseconds(6500) && frozenAfter < .seconds(9), "frozen \(frozenAfter) after leaving the foreground")
    }

    @Test func aTaskBegunInTheForegroundCountsFromTheMomentTheAppLeavesIt() async throws {
        let (bed, scope) = try await Self.bed(["--freeze-task-limit", "4"], focusB: false)
        defer { bed.stop() }
        let task = try Self.task(bed, ["--seconds", "0"], in: scope)
        defer { task.terminate(signal: SIGKILL) }
        #expect(Self.line(task, "task") != nil)
        try await Task.sleep(for: .seconds(5))
        try await bed.sway.focus(appID: "org.example.B")
        let left = ContinuousClock.now
        // Less than the warning's 5 s is granted: told at once, with the whole 4 s.
        let warning = try #require(Self.line(task, "expiring"))
        #expect(warning["seconds"] == 4)
        #expect(ContinuousClock.now - left < .seconds(1))
        let log = WatcherLog(bed)
        #expect(log.waitFor("org.example.A", "frozen", fromStart: true, timeout: .seconds(8)))
        let frozenAfter = ContinuousClock.now - left
        #expect(frozenAfter > .milliseconds(3500) && frozenAfter < .seconds(6), "frozen \(frozenAfter) after leaving the foreground")
    }

    @Test func aConnectionLeavingEndsItsTasks() async throws {
        let (bed, scope) = try await Self.bed()
        defer { bed.stop() }
        let task = try Self.task(bed, ["--seconds", "0", "--tasks", "3"], in: scope)
        for _ in 0..<3 { #expect(Self.line(task, "task") != nil) }
        let log = WatcherLog(bed)
        #expect(log.waitFor("org.example.A", "background", reason: "task", fromStart: true))
        task.terminate(signal: SIGKILL)
        #expect(log.waitFor("org.example.A", "frozen", timeout: .seconds(3)))
    }

    @Test func sixteenTasksPerAppNotAnAppAndTheReasonsLimit() async throws {
        let (bed, scope) = try await Self.bed()
        defer { bed.stop() }
        let many = try Self.task(bed, ["--seconds", "1", "--tasks", "17"], in: scope)
        defer { many.terminate(signal: SIGKILL) }
        var numbers: Set<Int> = []
        for _ in 0..<16 {
            guard let number = Self.line(many, "task")?["task"]?.doubleValue else { break }
            numbers.insert(Int(number))
        }
        #expect(numbers.count == 16)
        let refused = try #require(Self.line(many, "refused"))
        #expect(refused["error"] == "org.notifybus.Error.LimitsExceeded")
        for _ in 0..<16 { #expect(Self.line(many, "ended") != nil) }
        // A process in no app unit: the test's own place.
        let outside = try Self.task(bed, ["--seconds", "1"], in: nil)
        defer { outside.terminate(signal: SIGKILL) }
        #expect(try #require(Self.line(outside, "refused"))["error"] == "org.notifybus.Error.NotAnApp")
        // 256 bytes of reason are taken, 257 are not.
        let longest = try Self.task(bed, ["--seconds", "1", "--reason", String(repeating: "é", count: 128)], in: scope)
        defer { longest.terminate(signal: SIGKILL) }
        #expect(Self.line(longest, "task") != nil)
        let tooLong = try Self.task(bed, ["--seconds", "1", "--reason", String(repeating: "é", count: 128) + "x"], in: scope)
        defer { tooLong.terminate(signal: SIGKILL) }
        #expect(try #require(Self.line(tooLong, "refused"))["error"] == "org.freedesktop.DBus.Error.InvalidArgs")
    }

    @Test func theSwiftClientsTaskEndsAndIsWarnedOfItsEnd() async throws {
        let (bed, scope) = try await Self.bed(["--freeze-task-limit", "3"])
        defer { bed.stop() }
        // Works 6 s in a 3 s grant: warned at once (less than 5 s), then the grant ran out.
        let example = try bed.launch([Paths.executable("BackgroundTaskExample"), "6", "syncing"], in: scope, log: "swift-task")
        defer { example.terminate(signal: SIGKILL) }
        let granted = try JSONValue(parsing: try #require(example.readLine(timeout: .seconds(10))))
        #expect(granted["seconds"] == 3)
        let warned = try JSONValue(parsing: try #require(example.readLine(timeout: .seconds(5))))
        #expect(warned["expiring"] == 3)
        let log = WatcherLog(bed)
        #expect(log.waitFor("org.example.A", "frozen", fromStart: true, timeout: .seconds(8)))
        // Frozen with the example; in front again, it finds its task ended.
        try await bed.sway.focus(appID: "org.example.A")
        let ended = try JSONValue(parsing: try #require(example.readLine(timeout: .seconds(10))))
        #expect(ended["ended"] == false)
        #expect(ended["error"] == "org.freedesktop.DBus.Error.InvalidArgs")
    }

    @Test func theInterfaceIsThereOnlyWithTheFeature() async throws {
        let (bed, _) = try await Self.bed()
        defer { bed.stop() }
        let environment = try #require(bed.daemon).session.environment()
        let introspect = ["introspect", "--session", "--dest", "org.notifybus.Bus1", "--object-path", "/org/notifybus/Bus1"]
        let with = try await runCommand("/usr/bin/gdbus", introspect, environment: environment)
        #expect(with.contains("interface org.notifybus.Lifecycle1"))
        #expect(with.contains("BeginBackgroundTask") && with.contains("BackgroundTaskExpiring"))
        let plain = try await DaemonBed()
        let without = try await runCommand("/usr/bin/gdbus", introspect, environment: plain.session.environment())
        #expect(without.contains("interface org.notifybus.Bus1"))
        #expect(!without.contains("Lifecycle1"))
    }
}
