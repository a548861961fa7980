import NotifyBus
import NotifyBusSources
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

private let key = "memory/pressure"
private let nextGroupNumber = Atomic<Int>(1)

/// Where the tests that make real pressure run: as root (cgroup mounts), in CI always (and
/// they fail there when they cannot), elsewhere only as root.
enum PressureEnvironment {
    static var testsRun: Bool { getenv("CI") != nil || geteuid() == 0 }
}

/// CLOCK_BOOTTIME now, in seconds: the clock of the witness's times.
func bootTime() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_BOOTTIME, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// A cgroup2 group whose `memory.pressure` the source watches, and a memory limit of 16 MiB for what
/// is put in it (Tests/README.md, "Memory pressure"): a v1 memory group where the memory controller is
/// on cgroup v1 (these machines), else the group's own `memory.max`. Both hierarchies are mounted
/// afresh in a scratch directory (a second view of the same hierarchy), so nothing is assumed of
/// /sys/fs/cgroup.
final class PressureGroup {
    let directory: String
    /// The group's `memory.pressure`.
    let pressureFile: String
    /// The `cgroup.procs` files a process writes its PID to, to be limited and counted.
    let procsFiles: [String]
    let group: String
    private var mounts: [String] = []
    private var groups: [String] = []

    init() throws {
        guard geteuid() == 0 else { throw HarnessError("real memory pressure needs root, for cgroup mounts") }
        directory = try makeTemporaryDirectory("nb-pressure")
        let name = "nb-pressure-\(getpid())-\(nextGroupNumber.wrappingAdd(1, ordering: .relaxed).oldValue)"
        let unified = directory + "/unified"
        mkdir(unified, 0o755)
        guard mount("none", unified, "cgroup2", 0, nil) == 0 else { throw HarnessError("mount cgroup2: errno \(errno)") }
        mounts.append(unified)
        group = unified + "/" + name
        guard mkdir(group, 0o755) == 0 else { throw HarnessError("mkdir \(group): errno \(errno)") }
        groups.append(group)
        pressureFile = group + "/memory.pressure"

        let memory = directory + "/memory"
        mkdir(memory, 0o755)
        if mount("none", memory, "cgroup", 0, "memory") == 0 {
            mounts.append(memory)
            let limited = memory + "/" + name
            guard mkdir(limited, 0o755) == 0 else { throw HarnessError("mkdir \(limited): errno \(errno)") }
            groups.append(limited)
            try writeFile(limited + "/memory.limit_in_bytes", "16M")
            procsFiles = [limited + "/cgroup.procs", group + "/cgroup.procs"]
        } else {
            // The memory controller is on cgroup2 here.
            try writeFile(unified + "/cgroup.subtree_control", "+memory")
            try writeFile(group + "/memory.max", "16M")
            try? writeFile(group + "/memory.swap.max", "0")
            procsFiles = [group + "/cgroup.procs"]
        }
    }

    deinit { cleanUp() }

    /// Removes the cgroup2 group (the source's file goes away).
    func removeGroup() -> Bool { rmdir(group) == 0 }

    /// Moves what is left in the groups to their roots, removes the groups and the mounts.
    func cleanUp() {
        for group in groups.reversed() {
            let root = String(group[..<(group.lastIndex(of: "/") ?? group.endIndex)])
            for pid in (readFile(group + "/cgroup.procs") ?? "").split(separator: "\n") {
                try? writeFile(root + "/cgroup.procs", String(pid))
            }
            for _ in 0..<200 {
                if rmdir(group) == 0 || errno == ENOENT { break }
                usleep(10_000)
            }
        }
        groups = []
        for mount in mounts { umount2(mount, Int32(MNT_DETACH)) }
        mounts = []
        removeTree(directory)
    }
}

/// pressure_watch.py: the kernel's trigger events on the same file, seen by a program of its own.
final class PressureWitness {
    let process: ChildProcess
    /// Each event: `some` or `full`, and its CLOCK_BOOTTIME time.
    private(set) var events: [(kind: String, time: Double)] = []

    init(file: String) throws {
        process = try ChildProcess(
            executable: "/usr/bin/python3", arguments: [fixture("pressure_watch.py"), file], environment: ChildProcess.environment(with: [:]))
        guard let line = process.readLine(timeout: patience), (try? JSONValue(parsing: line))?["armed"] == true else {
            throw HarnessError("pressure_watch.py did not arm its triggers")
        }
    }

    /// Reads the events that arrived within `duration`.
    func collect(for duration: Duration) {
        let deadline = ContinuousClock.now + duration
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero, let line = process.readLine(timeout: remaining) else { return }
            guard let event = try? JSONValue(parsing: line), let kind = event["kind"]?.stringValue,
                  let time = event["t"]?.doubleValue
            else { continue }
            events.append((kind, time))
        }
    }
}

@Suite("MemoryPressureSource", .serialized)
struct MemoryPressureSourceTests {
    /// The source on `file`, with every value it publishes and when (CLOCK_BOOTTIME), recorded by
    /// the subscription (keep it).
    func makeSource(_ file: String) -> (RunningSource<MemoryPressureSource>, Recorder<(value: String, time: Double)>, Subscription) {
        let notifications = NotificationBus()
        let log = LogRecorder()
        let timed = Recorder<(value: String, time: Double)>()
        let subscription = notifications.subscribe([KeyPattern(key)]) { event in
            if let value = event.notification?.value.stringValue { timed.append((value, bootTime())) }
        }
        let source = MemoryPressureSource(bus: notifications, configuration: .init(path: file), logger: log.logger)
        return (RunningSource(source, bus: notifications, log: log), timed, subscription)
    }

    @Test func theSystemsPressureIsNormalBeforeTheSourceSaysRunning() async throws {
        let (running, _, _) = makeSource(MemoryPressureConfiguration.systemPath)
        #expect(await running.waitForStatus("running"))
        #expect(await running.storeWhenFirstRunning() == [key: "normal"])
        #expect(running.values(key) == ["normal"])
        try await running.stop()
    }

    @Test func theDefaultFileIsTheSystemsUnlessTheEnvironmentNamesOne() {
        let saved = getenv(MemoryPressureConfiguration.environmentVariable).map { String(cString: $0) }
        defer {
            if let saved { setenv(MemoryPressureConfiguration.environmentVariable, saved, 1) } else {
                unsetenv(MemoryPressureConfiguration.environmentVariable)
            }
        }
        unsetenv(MemoryPressureConfiguration.environmentVariable)
        #expect(MemoryPressureConfiguration().path == "/proc/pressure/memory")
        setenv(MemoryPressureConfiguration.environmentVariable, "/sys/fs/cgroup/user.slice/memory.pressure", 1)
        #expect(MemoryPressureConfiguration().path == "/sys/fs/cgroup/user.slice/memory.pressure")
        setenv(MemoryPressureConfiguration.environmentVariable, "", 1)
        #expect(MemoryPressureConfiguration().path == "/proc/pressure/memory")
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        var path: String
        var reason: String
        var testDescription: String { path }
    }

    @Test(arguments: [
        Refusal(path: "/nonexistent/memory.pressure", reason: "statfs /nonexistent/memory.pressure: No such file or directory (errno 2)"),
        Refusal(path: "/proc/loadavg", reason: "/proc/loadavg is not a PSI file: it does not read as PSI (some avg10=…)"),
        Refusal(path: "/proc/pressure", reason: "reading /proc/pressure: Is a directory (errno 21)"),
    ])
    func whereNoTriggerCanBeArmedItIsUnavailableWithTheReason(_ refusal: Refusal) async throws {
        let (running, _, _) = makeSource(refusal.path)
        #expect(await eventually { running.source.status == .unavailable(reason: refusal.reason) }, "\(running.source.status)")
        #expect(running.bus.value(forKey: key) == nil)
        try await running.stop()
    }

    /// A path that names an ordinary file: nothing is written to it.
    @Test func anOrdinaryFileIsNeverWrittenTo() async throws {
        let file = try makeTemporaryFile("not-pressure")
        defer { unlink(file) }
        try writeFile(file, "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
        let (running, _, _) = makeSource(file)
        #expect(await eventually { running.source.status.reason?.hasPrefix("\(file) is not a PSI file: it is on 0x") == true })
        #expect(readFile(file) == "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
        try await running.stop()
    }

    /// The group goes away under the source: unavailable at once (epoll would report the dead
    /// triggers for ever: they are closed, so the loop does not spin), and running again after a
    /// re-read once the group is back.
    @Test(.enabled(if: PressureEnvironment.testsRun))
    func aGroupRemovedUnderItIsUnavailableUntilARereadFindsItAgain() async throws {
        let groups = try PressureGroup()
        defer { groups.cleanUp() }
        let (running, _, _) = makeSource(groups.pressureFile)
        #expect(await running.waitForStatus("running"))
        #expect(groups.removeGroup())
        #expect(await eventually {
            running.source.status == .unavailable(
                reason: "\(groups.pressureFile): the some trigger reports an error (the file went away?)")
                || running.source.status == .unavailable(
                    reason: "\(groups.pressureFile): the full trigger reports an error (the file went away?)")
        }, "\(running.source.status)")
        let cpu = processCPUSeconds()
        try await Task.sleep(for: .seconds(1))
        #expect(processCPUSeconds() - cpu < 0.3)
        await running.source.reread()
        #expect(running.source.status.reason?.contains("No such file or directory") == true)
        #expect(mkdir(groups.group, 0o755) == 0)
        await running.source.reread()
        #expect(running.source.status == .running)
        #expect(running.values(key) == ["normal"])
        try await running.stop()
    }

    /// A process that keeps touching more memory than its group may hold: the level rises with the
    /// kernel's triggers (as an independent program sees them on the same file) and falls to
    /// normal 10 s after the last one.
    @Test(.enabled(if: PressureEnvironment.testsRun))
    func realPressureRaisesTheLevelWhichFallsTenSecondsAfterTheLastTrigger() async throws {
        let groups = try PressureGroup()
        defer { groups.cleanUp() }
        let (running, timed, subscription) = makeSource(groups.pressureFile)
        #expect(await running.waitForStatus("running"))
        #expect(await running.storeWhenFirstRunning() == [key: "normal"])
        let witness = try PressureWitness(file: groups.pressureFile)
        let load = try ChildProcess(
            executable: "/usr/bin/python3",
            arguments: [fixture("memory_load.py"), groups.directory + "/data", "6"] + groups.procsFiles,
            environment: ChildProcess.environment(with: [:]))
        #expect(load.readLine(timeout: .seconds(30)) == "ready")
        load.send("go")
        #expect(load.readLine(timeout: patience) == "loading")
        let started = bootTime()
        // The load runs 6 s; the last trigger comes up to about 1 s after it ends, the return 10 s later.
        witness.collect(for: .seconds(8))
        #expect(load.readLine(timeout: patience) == "done")
        #expect(await running.waitFor(key, "normal", timeout: .seconds(20)))
        witness.collect(for: .milliseconds(100))

        let triggers = witness.events
        try #require(!triggers.isEmpty, "the load made no trigger fire: no pressure was made")
        let values = timed.all
        // normal, then rising levels only, then normal once, 10 s after the last trigger.
        let raised = values.dropFirst().dropLast().map(\.value)
        #expect(values.first?.value == "normal")
        #expect(values.last?.value == "normal")
        #expect(raised == (triggers.contains { $0.kind == "full" } ? ["warning", "critical"].filter(raised.contains) : ["warning"]))
        #expect(!raised.isEmpty)
        if let firstRaise = values.dropFirst().first, let firstTrigger = triggers.first {
            #expect(firstRaise.time - firstTrigger.time < 0.5, "raised \(firstRaise.time - started) s in, the trigger \(firstTrigger.time - started) s in")
        }
        if let back = values.last, let lastTrigger = triggers.last {
            let delay = back.time - lastTrigger.time
            #expect(delay >= 9.9 && delay < 11, "normal \(delay) s after the last trigger")
        }
        try await running.stop()
        subscription.cancel()
    }
}

/// This process's user and system CPU time, in seconds.
private func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}
