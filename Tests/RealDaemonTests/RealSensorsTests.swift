import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A property of a service on `bus`, as `busctl get-property` prints it (`s "left-up"`).
func busctlProperty(_ bus: PrivateBus, _ service: String, _ path: String, _ interface: String, _ name: String) async -> String? {
    let flag = bus.kind == .system ? "--system" : "--user"
    return try? await runCommand(
        "/usr/bin/busctl", [flag, "get-property", service, path, interface, name], environment: bus.environment()
    ).split(separator: "\n").first.map(String.init)
}

/// Waits until `condition` holds, without blocking a thread; returns whether it did.
func eventuallyTrue(timeout: Duration = realPatience, _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while true {
        if await condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(20))
    }
}

/// `notifywatch --source sensors` against the REAL iio-sensor-proxy (/usr/sbin/iio-sensor-proxy)
/// on umockdev IIO devices (an accelerometer, a proximity sensor and a light sensor;
/// Tests/README.md, "iio-sensor-proxy on umockdev"), on a private system bus named by
/// `--system-bus`. The daemon polls the test bed's sysfs files every ~700 ms while a sensor is
/// claimed, so every change takes about that long to show.
@Suite("notifywatch with the real iio-sensor-proxy")
struct RealSensorsTests {
    static let service = "net.hadess.SensorProxy"
    static let path = "/net/hadess/SensorProxy"

    @Test func initialLiveSuspendedRestartedStoppedTerminatedAndReplayed() async throws {
        let bus = try PrivateBus()
        let testbed = try IIOTestbed(bus: bus)
        for device in ["accel", "proximity", "als"] { try testbed.add(device) }
        try testbed.start()
        try await bus.waitForOwner(of: Self.service)

        let watch = try NotifyWatchRun(["--source", "sensors", "--system-bus", bus.address])

        // The source line once the first readings are in, then the current values (coalesced 0).
        let source = await watch.next()
        #expect(source?["type"] == "source")
        #expect(source?["source"] == "sensors")
        #expect(source?["status"] == "running")
        #expect(source?["reason"] == nil)
        let initial = await watch.next(3)
        #expect(Set(initial.compactMap(Note.init)) == [
            Note("orientation", "portrait", coalesced: 0),
            Note("proximity", true, coalesced: 0),
            Note("light", ["level": 10, "unit": "lux"], coalesced: 0),
        ])
        #expect(Set(initial.compactMap { $0["t"] }).count == 1)
        #expect(initial.allSatisfy { $0["subscriber"] == "notifywatch" && $0["time"]?.stringValue != nil })

        // Live: each change as it comes, alone, with the value it replaces.
        try testbed.orient("left-up")
        #expect(await watch.next().flatMap(Note.init) == Note("orientation", "landscape-left", previous: "portrait"))
        try testbed.set("proximity", ["in_proximity_raw": "0"])
        #expect(await watch.next().flatMap(Note.init) == Note("proximity", false, previous: true))
        try testbed.set("als", ["in_illuminance_input": "250"])
        #expect(await watch.next().flatMap(Note.init) == Note("light", ["level": 250, "unit": "lux"], previous: ["level": 10, "unit": "lux"]))

        // SIGUSR1: nothing printed while three orientations and a proximity change come in;
        // SIGUSR2: one line per key, `flushed` matching, in the order of each key's latest event.
        let suspended = await watch.signal(SIGUSR1, expecting: "suspended")
        #expect(suspended?["subscriber"] == "notifywatch")
        for (step, raw) in ["bottom-up", "normal", "right-up"].enumerated() {
            try testbed.orient(raw)
            await watch.waitUntilRecorded(3 + step, eventsFor: "orientation")
        }
        try testbed.set("proximity", ["in_proximity_raw": "256"])
        await watch.waitUntilRecorded(3, eventsFor: "proximity")
        #expect(await watch.linesArriving(within: .milliseconds(500)) == [])
        let resumed = await watch.signal(SIGUSR2, expecting: "resumed")
        #expect(resumed?["flushed"] == 2)
        let flushed = await watch.next(2)
        #expect(flushed.compactMap(Note.init) == [
            Note("orientation", "landscape-right", coalesced: 3, previous: "landscape-left"),
            Note("proximity", true, coalesced: 1, previous: false),
        ])
        #expect(flushed.allSatisfy { $0["t"] == resumed?["t"] })

        // The daemon stops: the source is unavailable (the values stay, nothing else is printed).
        try testbed.stop()
        let gone = await watch.next()
        #expect(gone?["type"] == "source")
        #expect(gone?["status"] == "unavailable")
        #expect(gone?["reason"]?.stringValue?.isEmpty == false)
        #expect(await watch.linesArriving(within: .milliseconds(300)) == [])

        // The light changes while it is away; it restarts: running again, the source claims the
        // sensors again and publishes what differs (the light), not what did not (the rest).
        try testbed.set("als", ["in_illuminance_input": "500"])
        try testbed.start()
        let back = await watch.next(2)
        #expect(back.contains { $0["type"] == "source" && $0["status"] == "running" && $0["reason"] == nil }, "\(back)")
        #expect(back.compactMap(Note.init) == [Note("light", ["level": 500, "unit": "lux"], previous: ["level": 250, "unit": "lux"])])
        // Values flow again: the daemon polls only claimed sensors, so this shows the new claims.
        try testbed.orient("normal")
        #expect(await watch.next().flatMap(Note.init) == Note("orientation", "portrait", previous: "landscape-right"))
        try testbed.set("proximity", ["in_proximity_raw": "0"])
        #expect(await watch.next().flatMap(Note.init) == Note("proximity", false, previous: true))

        // Ctrl-Z: `suspended`, then the process really stops. A change while it is stopped (the
        // daemon keeps polling for its claim) comes on fg as one flushed line.
        #expect(await watch.signal(SIGTSTP, expecting: "suspended") != nil)
        #expect(await watch.waitForState { $0 == "T" } == "T")
        try testbed.orient("left-up")
        #expect(await eventuallyTrue {
            await busctlProperty(bus, Self.service, Self.path, Self.service, "AccelerometerOrientation") == #"s "left-up""#
        })
        #expect(processState(watch.pid) == "T")
        #expect(await watch.linesArriving(within: .milliseconds(300)) == [])
        watch.signal(SIGCONT)
        #expect(await watch.waitForState { $0 != "T" }.map { ["S", "R"].contains($0) } == true)
        let continued = await watch.next()
        #expect(continued?["type"] == "resumed")
        #expect(continued?["flushed"] == 1)
        #expect(await watch.next().flatMap(Note.init) == Note("orientation", "landscape-left", coalesced: 1, previous: "portrait"))
        try testbed.orient("bottom-up")
        #expect(await watch.next().flatMap(Note.init) == Note("orientation", "portrait-upside-down", previous: "landscape-left"))

        // SIGTERM: exit 0, nothing more printed, nothing on standard error, a complete recording.
        #expect(await watch.stop(with: SIGTERM) == 0)
        #expect(await watch.rest() == [])
        #expect(watch.standardError == "")
        #expect(readFile(watch.recording)?.hasSuffix("}\n") == true)
        #expect(watch.records.last?["type"] == "unsubscribe")

        // The recording replays to the same lines (without `source` lines and live `time`).
        let live = watch.replayableLines
        // 3 current values, 3 live, suspended, resumed + 2, the light after the restart, 2 live,
        // suspended (Ctrl-Z), resumed + 1, 1 live.
        let expected: Int = 3 + 3 + 1 + (1 + 2) + 1 + 2 + 1 + (1 + 1) + 1
        #expect(live.count == expected)
        let replay = try await watch.replay()
        #expect(replay.status == 0)
        #expect(replay.lines == live)
        try testbed.stop()
    }

    /// The daemon stops and comes back while the watcher is suspended (SIGUSR1) or stopped
    /// (Ctrl-Z): nothing is printed meanwhile, `source` lines included; the resume prints the
    /// flush (with what changed while the daemon was away, read after the new claims), then the
    /// source's status where it differs from the one last printed.
    @Test func aRestartWhileSuspendedOrStoppedIsPrintedOnlyOnResume() async throws {
        let bus = try PrivateBus()
        let testbed = try IIOTestbed(bus: bus)
        for device in ["accel", "proximity"] { try testbed.add(device) }
        try testbed.start()
        try await bus.waitForOwner(of: Self.service)
        let watch = try NotifyWatchRun(["--source", "sensors", "--system-bus", bus.address])
        #expect(await watch.next()?["status"] == "running")
        #expect(Set(await watch.next(2).compactMap(Note.init)) == [
            Note("orientation", "portrait", coalesced: 0), Note("proximity", true, coalesced: 0),
        ])

        // Suspended, the daemon goes away: silence; the resume flushes nothing, then says so.
        #expect(await watch.signal(SIGUSR1, expecting: "suspended") != nil)
        try testbed.stop()
        #expect(await watch.linesArriving(within: .milliseconds(700)) == [])
        let resumed = await watch.signal(SIGUSR2, expecting: "resumed")
        #expect(resumed?["flushed"] == 0)
        let gone = await watch.next()
        #expect(gone?["type"] == "source")
        #expect(gone?["status"] == "unavailable")
        #expect(gone?["t"] == resumed?["t"])

        // Suspended, the device turns and the daemon comes back: silence until the resume, then
        // the new orientation (the source claimed again), then `running`.
        #expect(await watch.signal(SIGUSR1, expecting: "suspended") != nil)
        try testbed.orient("left-up")
        try testbed.start()
        await watch.waitUntilRecorded(2, eventsFor: "orientation")
        #expect(await watch.linesArriving(within: .milliseconds(500)) == [])
        let back = await watch.signal(SIGUSR2, expecting: "resumed")
        #expect(back?["flushed"] == 1)
        #expect(await watch.next().flatMap(Note.init) == Note("orientation", "landscape-left", coalesced: 1, previous: "portrait"))
        let running = await watch.next()
        #expect(running?["type"] == "source")
        #expect(running?["status"] == "running")

        // Stopped (Ctrl-Z) while the daemon restarts and the device turns: on fg the source
        // claims again and waits for the first readings, so the flush carries the change; the
        // status is what it was (running): no source line.
        #expect(await watch.signal(SIGTSTP, expecting: "suspended") != nil)
        #expect(await watch.waitForState { $0 == "T" } == "T")
        try testbed.stop()
        try testbed.orient("right-up")
        try testbed.start()
        try await bus.waitForOwner(of: Self.service)
        #expect(processState(watch.pid) == "T")
        watch.signal(SIGCONT)
        let continued = await watch.next()
        #expect(continued?["type"] == "resumed")
        #expect(continued?["flushed"] == 1)
        #expect(await watch.next().flatMap(Note.init) == Note("orientation", "landscape-right", coalesced: 1, previous: "landscape-left"))
        let afterContinue = await watch.linesArriving(within: .milliseconds(1500))
        #expect(afterContinue == [], "\(afterContinue)")
        try testbed.orient("normal")
        #expect(await watch.next().flatMap(Note.init) == Note("orientation", "portrait", previous: "landscape-right"))

        #expect(await watch.stop(with: SIGTERM) == 0)
        #expect(await watch.rest() == [])
        #expect(watch.standardError == "")
        let replay = try await watch.replay()
        #expect(replay.status == 0)
        #expect(replay.lines == watch.replayableLines)
        try testbed.stop()
    }
}
