import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

// The real notifywatch watching umockdev backlights with `--source display`.

@Suite("notifywatch --source display")
struct DisplayWatchTests {
    @Test func watchesBacklightBrightness() throws {
        let testbed = try Testbed()
        try testbed.add(
            "intel_backlight", subsystem: "backlight",
            attributes: ["max_brightness": "1000", "actual_brightness": "300", "brightness": "300"], properties: [:])
        let watcher = try Watcher(["--source", "display"], testbed: testbed)
        let (source, notes) = watcher.start(initial: 1)
        #expect(source?["source"] == "display")
        #expect(source?["status"] == "running")
        #expect(notes == [Note("display/intel_backlight/brightness", 0.3, coalesced: 0)])

        try testbed.set("intel_backlight", attributes: ["actual_brightness": "450"], uevent: "change")
        #expect(watcher.next().flatMap(Note.init) == Note("display/intel_backlight/brightness", 0.45, previous: 0.3))

        try testbed.remove("intel_backlight")
        #expect(watcher.next().flatMap(Note.init) == Note("display/intel_backlight/brightness", .null, previous: 0.45))
        #expect(watcher.stop(with: SIGTERM) == 0)
    }

    @Test func withoutABacklightTheSourceRunsWithNoKey() throws {
        let testbed = try Testbed()
        let json = try run(["sources", "--json"], testbed: testbed)
        #expect(json.status == 0)
        let line = json.lines.compactMap { try? JSONValue(parsing: $0) }.first { $0["source"] == "display" }
        #expect(line == ["type": "source", "source": "display", "status": "running", "keys": ["display/*/brightness"]])
    }
}
