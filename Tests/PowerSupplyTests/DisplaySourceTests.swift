import NotifyBus
import TestSupport
import Testing

// DisplaySource against real libudev and umockdev test beds of `backlight` devices, run in
// PowerSupplyProbe (`--source display`) under umockdev's preload, like PowerSupplySourceTests.

extension Testbed {
    /// Adds `/sys/class/backlight/<name>` with these sysfs attributes (backlights carry no
    /// udev properties of their own).
    fileprivate func addBacklight(_ name: String, _ attributes: [String: String]) throws {
        try add(name, subsystem: "backlight", attributes: attributes, properties: [:])
    }

    /// Writes sysfs attributes and, unless `announced` is false, sends a `change` uevent, as the
    /// kernel does when the brightness is set through the backlight class.
    fileprivate func setBacklight(_ name: String, _ attributes: [String: String], announced: Bool = true) throws {
        try set(name, attributes: attributes, uevent: announced ? "change" : nil)
    }
}

extension Probe {
    /// The probe running DisplaySource.
    fileprivate convenience init(display testbed: Testbed, arguments: [String] = []) throws {
        try self.init(testbed: testbed, arguments: ["--source", "display"] + arguments)
    }
}

private let intel = ["max_brightness": "1000", "actual_brightness": "300", "brightness": "300"]

/// The voluntary context switches of the probe's loop thread (`probe`, where the source's timer
/// fires) over `duration`, after 300 ms for what it was doing to end; -1 when it is not there.
private func loopWakeUps(of probe: Probe, over duration: Duration) async -> Int64 {
    func count() -> Int64? {
        ProcessStats.threads(of: probe.process.pid).first { $0.name == "probe" }?.voluntarySwitches
    }
    try? await Task.sleep(for: .milliseconds(300))
    let before = count()
    try? await Task.sleep(for: duration)
    guard let before, let after = count() else { return -1 }
    return after - before
}

@Suite("DisplaySource under umockdev", .serialized)
struct DisplaySourceTests {
    @Test func initialValueOfEachBacklight() throws {
        let testbed = try Testbed()
        try testbed.addBacklight("intel_backlight", intel)
        try testbed.addBacklight("acpi_video0", ["max_brightness": "15", "actual_brightness": "15", "brightness": "15"])
        let probe = try Probe(display: testbed)
        let (status, notes) = probe.start()
        #expect(status?["source"] == "display")
        #expect(status?["status"] == "running")
        #expect(Set(notes.map(\.description)) == Set([
            Note("display/intel_backlight/brightness", 0.3),
            Note("display/acpi_video0/brightness", 1.0),
        ].map(\.description)))
        #expect(notes.count == 2)
        #expect(probe.quit() == 0)
    }

    @Test func liveChangesFollowActualBrightness() throws {
        let testbed = try Testbed()
        try testbed.addBacklight("intel_backlight", intel)
        let probe = try Probe(display: testbed)
        _ = probe.start()

        try testbed.setBacklight("intel_backlight", ["brightness": "500", "actual_brightness": "500"])
        #expect(probe.notes(1) == [Note("display/intel_backlight/brightness", 0.5, previous: 0.3)])
        // The requested level (`brightness`) does not count while the hardware reports `actual_brightness`.
        try testbed.setBacklight("intel_backlight", ["brightness": "800"])
        #expect(probe.notesUntilSynced().isEmpty)
        try testbed.setBacklight("intel_backlight", ["actual_brightness": "0"])
        #expect(probe.notes(1) == [Note("display/intel_backlight/brightness", 0.0, previous: 0.5)])
        try testbed.setBacklight("intel_backlight", ["actual_brightness": "1200"])  // clamped
        #expect(probe.notes(1) == [Note("display/intel_backlight/brightness", 1.0, previous: 0.0)])
        // A uevent that repeats the current value publishes nothing.
        try testbed.uevent("intel_backlight")
        #expect(probe.notesUntilSynced().isEmpty)
    }

    @Test func severalChangesWhileSuspendedFlushOneNotificationWithTheCount() throws {
        let testbed = try Testbed()
        try testbed.addBacklight("intel_backlight", intel)
        try testbed.addBacklight("acpi_video0", ["max_brightness": "10", "actual_brightness": "5", "brightness": "5"])
        let probe = try Probe(display: testbed)
        _ = probe.start()

        #expect(probe.command("suspend").compactMap(Note.init).isEmpty)
        // A uevent makes the source read sysfs when it handles it: each change is handled before
        // the next is written, so that each one is seen (and held: nothing is printed).
        for level in ["400", "450", "500", "550", "600"] {
            try testbed.setBacklight("intel_backlight", ["brightness": level, "actual_brightness": level])
            #expect(probe.notesUntilSynced().isEmpty)
        }

        let resumed = probe.resume()
        #expect(resumed.flushed == 1)
        #expect(resumed.notes == [
            Note("display/intel_backlight/brightness", 0.6, coalesced: 5, previous: 0.3, kind: "flushed"),
        ])
        try testbed.setBacklight("acpi_video0", ["brightness": "2", "actual_brightness": "2"])
        #expect(probe.notes(1) == [Note("display/acpi_video0/brightness", 0.2, previous: 0.5)])
    }

    @Test func brightnessStandsInWhenActualBrightnessIsMissingOrNotANumber() throws {
        let testbed = try Testbed()
        try testbed.addBacklight("acpi_video0", ["max_brightness": "20", "brightness": "5"])
        try testbed.addBacklight("garbled", ["max_brightness": "10", "actual_brightness": "n/a", "brightness": "7"])
        let probe = try Probe(display: testbed)
        let notes = probe.start().notes
        #expect(Set(notes.map(\.description)) == Set([
            Note("display/acpi_video0/brightness", 0.25),
            Note("display/garbled/brightness", 0.7),
        ].map(\.description)))

        try testbed.setBacklight("acpi_video0", ["brightness": "10"])
        #expect(probe.notes(1) == [Note("display/acpi_video0/brightness", 0.5, previous: 0.25)])
        // Once the hardware reports a number, it wins.
        try testbed.setBacklight("garbled", ["actual_brightness": "3"])
        #expect(probe.notes(1) == [Note("display/garbled/brightness", 0.3, previous: 0.7)])
        #expect(probe.logged.isEmpty)
    }

    @Test func unusableAttributesAreSkippedAndReported() throws {
        let testbed = try Testbed()
        try testbed.addBacklight("dark", ["max_brightness": "0", "actual_brightness": "0", "brightness": "0"])
        try testbed.addBacklight("words", ["max_brightness": "lots", "actual_brightness": "3", "brightness": "3"])
        try testbed.addBacklight("intel_backlight", ["max_brightness": "1000", "brightness": "300"])
        let probe = try Probe(display: testbed)
        let (status, notes) = probe.start()
        #expect(status?["status"] == "running")
        #expect(notes == [Note("display/intel_backlight/brightness", 0.3)])
        #expect(probe.logged.contains { $0.contains("dark") && $0.contains("max_brightness is 0") })
        #expect(probe.logged.contains { $0.contains("words") && $0.contains("max_brightness is not a number") })
        #expect(probe.logged.count == 2)

        // A re-read finds the same problems and does not report them again.
        #expect(probe.command("reread").compactMap(Note.init).isEmpty)
        #expect(probe.logged.count == 2)

        // A brightness that is not a number is skipped; the last value stays.
        try testbed.setBacklight("intel_backlight", ["brightness": "bright"])
        #expect(probe.notesUntilSynced().isEmpty)
        #expect(probe.logged.last?.contains("brightness is not a number") == true)

        // Fixed devices publish again.
        try testbed.setBacklight("dark", ["max_brightness": "100"])
        #expect(probe.notes(1) == [Note("display/dark/brightness", 0.0)])
        try testbed.setBacklight("intel_backlight", ["brightness": "600"])
        #expect(probe.notes(1) == [Note("display/intel_backlight/brightness", 0.6, previous: 0.3)])
    }

    @Test func noBacklightIsRunningWithNoKeyUntilOneAppears() throws {
        let testbed = try Testbed()
        let probe = try Probe(display: testbed)
        let (status, notes) = probe.start()
        #expect(status?["status"] == "running")
        #expect(status?["reason"] == nil)
        #expect(notes.isEmpty)

        try testbed.addBacklight("intel_backlight", intel)
        #expect(probe.notes(1) == [Note("display/intel_backlight/brightness", 0.3)])
    }

    @Test func hotPlugAddAndRemove() throws {
        let testbed = try Testbed()
        try testbed.addBacklight("intel_backlight", intel)
        let probe = try Probe(display: testbed)
        #expect(probe.start().notes == [Note("display/intel_backlight/brightness", 0.3)])

        try testbed.addBacklight("ddcci0", ["max_brightness": "100", "actual_brightness": "40", "brightness": "40"])
        #expect(probe.notes(1) == [Note("display/ddcci0/brightness", 0.4)])

        // "The device went away": its key gets null; the other is untouched; still running.
        try testbed.remove("ddcci0")
        #expect(probe.notes(1) == [Note("display/ddcci0/brightness", .null, previous: 0.4)])
        try testbed.remove("intel_backlight")
        #expect(probe.notes(1) == [Note("display/intel_backlight/brightness", .null, previous: 0.3)])
        #expect(!probe.lines.contains { $0["type"] == "source" && $0["status"] != "running" })

        try testbed.addBacklight("ddcci0", ["max_brightness": "100", "actual_brightness": "70", "brightness": "70"])
        #expect(probe.notes(1) == [Note("display/ddcci0/brightness", 0.7, previous: .null)])
    }

    @Test func theRereadTimerCatchesWhatCameWithoutAUevent() throws {
        let testbed = try Testbed()
        for (name, maximum) in [("intel_backlight", "1000"), ("ddcci0", "100"), ("late", "0")] {
            try testbed.addBacklight(name, ["max_brightness": maximum, "actual_brightness": "30"])
        }
        let probe = try Probe(display: testbed, arguments: ["--reread-interval", "0.2"])
        #expect(probe.start().notes.count == 2)

        // Firmware that changes the brightness without a uevent, a driver that fills in its
        // maximum late, and a device gone unannounced: each is seen by the next re-read.
        try testbed.setBacklight("intel_backlight", ["actual_brightness": "250"], announced: false)
        #expect(probe.notes(1) == [Note("display/intel_backlight/brightness", 0.25, previous: 0.03)])
        try testbed.setBacklight("late", ["max_brightness": "60"], announced: false)
        #expect(probe.notes(1) == [Note("display/late/brightness", 0.5)])
        try testbed.remove("ddcci0", silently: true)
        #expect(probe.notes(1) == [Note("display/ddcci0/brightness", .null, previous: 0.3)])
        #expect(probe.logged.count == 1)
    }

    /// The re-read timer runs only while there is a device to re-read: with none its thread
    /// sleeps; once one is plugged in, a change that comes without a uevent is read on the timer;
    /// once the last one is removed, the thread sleeps again.
    @Test func theRereadTimerRunsOnlyWhileABacklightExists() async throws {
        let testbed = try Testbed()
        let probe = try Probe(display: testbed, arguments: ["--reread-interval", "0.2"])
        #expect(probe.start().status?["status"] == "running")
        let withNone = await loopWakeUps(of: probe, over: .seconds(1))
        #expect(withNone == 0, "\(withNone) wake-ups with no backlight")

        try testbed.addBacklight("intel_backlight", intel)
        #expect(probe.notes(1) == [Note("display/intel_backlight/brightness", 0.3)])
        try testbed.setBacklight("intel_backlight", ["actual_brightness": "600"], announced: false)
        #expect(probe.notes(1) == [Note("display/intel_backlight/brightness", 0.6, previous: 0.3)])
        let withOne = await loopWakeUps(of: probe, over: .seconds(1))
        #expect(withOne >= 3, "\(withOne) wake-ups with a backlight")

        try testbed.remove("intel_backlight")
        #expect(probe.notes(1) == [Note("display/intel_backlight/brightness", .null, previous: 0.6)])
        let afterRemoval = await loopWakeUps(of: probe, over: .seconds(1))
        #expect(afterRemoval == 0, "\(afterRemoval) wake-ups once it was removed")
        #expect(probe.quit() == 0)
    }

    @Test func overflowAndRereadOnDemandReadEverythingAgain() throws {
        let testbed = try Testbed()
        try testbed.addBacklight("intel_backlight", intel)
        try testbed.addBacklight("acpi_video0", ["max_brightness": "10", "actual_brightness": "5", "brightness": "5"])
        let probe = try Probe(display: testbed)  // timer: one hour
        _ = probe.start()

        try testbed.setBacklight("intel_backlight", ["actual_brightness": "900"], announced: false)
        #expect(probe.command("reread").compactMap(Note.init)
            == [Note("display/intel_backlight/brightness", 0.9, previous: 0.3)])

        // A lost uevent, then ENOBUFS on the next receive (which another device's uevent triggers).
        try testbed.setBacklight("intel_backlight", ["actual_brightness": "100"], announced: false)
        probe.command("overflow")
        try testbed.uevent("acpi_video0")
        #expect(probe.notes(1) == [Note("display/intel_backlight/brightness", 0.1, previous: 0.9)])
        try testbed.setBacklight("acpi_video0", ["actual_brightness": "1"])
        #expect(probe.notes(1) == [Note("display/acpi_video0/brightness", 0.1, previous: 0.5)])
    }
}
