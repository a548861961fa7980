import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

// PowerSupplySource against real libudev and umockdev test beds.
//
// Each test builds its own test bed (TestSupport's Testbed, under umockdev's preload), then runs
// the source in a child process, PowerSupplyProbe, with LD_PRELOAD=libumockdev-preload.so.0 and
// UMOCKDEV_DIR pointing at the test bed: the preload must sit under the libudev that the source
// calls, and the test runner itself must stay off it. The probe prints what a subscriber
// receives; the tests drive the devices and compare. Plain `swift test` runs all of this.

private let battery80 = ["type": "Battery", "present": "1", "status": "Discharging", "capacity": "80"]
private let acOffline = ["type": "Mains", "online": "0"]

@Suite("PowerSupplySource under umockdev", .serialized)
struct PowerSupplySourceTests {
    @Test func initialEnumerationPublishesEveryBatteryAndSupply() throws {
        let testbed = try Testbed()
        try testbed.add("AC", ["type": "Mains", "online": "1"])
        try testbed.add("BAT0", battery80)
        // No capacity: the level comes from energy_now/energy_full.
        try testbed.add("BAT1", [
            "type": "Battery", "status": "Charging", "energy_now": "30000000", "energy_full": "60000000",
        ])
        try testbed.add("USB", ["type": "USB", "online": "0"])
        try testbed.add("ucsi-source-psy-USBC000:001", ["type": "USB_C", "online": "2"])
        // Neither a battery nor a supply with an online value: ignored.
        try testbed.add("mystery", ["type": "Unknown"])

        let probe = try Probe(testbed: testbed)
        let (status, notes) = probe.start()
        #expect(status?["status"] == "running")
        #expect(Set(notes.map(\.description)) == Set([
            Note("battery/BAT0/state", "unplugged"),
            Note("battery/BAT0/level", 0.8),
            Note("battery/BAT1/state", "charging"),
            Note("battery/BAT1/level", 0.5),
            Note("power/AC/online", true),
            Note("power/USB/online", false),
            Note("power/ucsi-source-psy-USBC000:001/online", true),
        ].map(\.description)))
        #expect(notes.count == 7)
        // Each device's keys in order: state before level.
        let keys = notes.map(\.key)
        #expect(keys.firstIndex(of: "battery/BAT0/state")! < keys.firstIndex(of: "battery/BAT0/level")!)
        // Cancelling the source's task ends run(), and the process exits cleanly.
        #expect(probe.quit() == 0)
    }

    @Test func everyKernelStatusMapsOntoTheContractsStates() throws {
        let testbed = try Testbed()
        try testbed.add("BAT0", battery80)
        let probe = try Probe(testbed: testbed)
        #expect(probe.start().notes.contains(Note("battery/BAT0/state", "unplugged")))

        let statuses = ["Charging", "Full", "Not charging", "Unknown", "Discharging", "Bogus", "Charging"]
        for status in statuses { try testbed.update("BAT0", ["status": status]) }
        let notes = probe.notes(statuses.count)
        #expect(notes.map(\.value) == ["charging", "full", "not-charging", "unknown", "unplugged", "unknown", "charging"])
        #expect(notes.map(\.previous) == ["unplugged", "charging", "full", "not-charging", "unknown", "unplugged", "unknown"])
        #expect(notes.allSatisfy { $0.key == "battery/BAT0/state" && $0.coalesced == 1 })
        // The level did not change, so nothing was published for it.
        #expect(probe.notesUntilSynced().isEmpty)
    }

    @Test func capacityChangesPublishTheLevel() throws {
        let testbed = try Testbed()
        try testbed.add("BAT0", battery80)
        let probe = try Probe(testbed: testbed)
        _ = probe.start()

        for capacity in ["79", "50", "100", "0", "150"] { try testbed.update("BAT0", ["capacity": capacity]) }
        let notes = probe.notes(4)
        #expect(notes == [
            Note("battery/BAT0/level", 0.79, previous: 0.8),
            Note("battery/BAT0/level", 0.5, previous: 0.79),
            Note("battery/BAT0/level", 1.0, previous: 0.5),
            Note("battery/BAT0/level", 0.0, previous: 1.0),
        ])
        // 150 % is clamped to 1.0.
        #expect(probe.notes(1) == [Note("battery/BAT0/level", 1.0, previous: 0.0)])
        // A uevent that repeats the current values publishes nothing.
        try testbed.uevent("BAT0")
        #expect(probe.notesUntilSynced().isEmpty)
    }

    @Test func levelFallsBackToChargeAndValuesFallBackToSysfs() throws {
        let testbed = try Testbed()
        // No capacity and no energy: charge_now/charge_full.
        try testbed.add("BAT0", ["type": "Battery", "status": "Full", "charge_now": "2500000", "charge_full": "5000000"])
        // No udev properties at all: everything from sysfs attributes.
        try testbed.add("BAT1", attributes: ["type": "Battery", "status": "Charging", "capacity": "42"], properties: [:])
        let probe = try Probe(testbed: testbed)
        let notes = probe.start().notes
        #expect(Set(notes.map(\.description)) == Set([
            Note("battery/BAT0/state", "full"), Note("battery/BAT0/level", 0.5),
            Note("battery/BAT1/state", "charging"), Note("battery/BAT1/level", 0.42),
        ].map(\.description)))

        // A uevent without POWER_SUPPLY_* properties: the values are read from sysfs.
        try testbed.set("BAT1", attributes: ["status": "Discharging", "capacity": "41"], uevent: "change")
        #expect(probe.notes(2) == [
            Note("battery/BAT1/state", "unplugged", previous: "charging"),
            Note("battery/BAT1/level", 0.41, previous: 0.42),
        ])
        // Properties win over attributes when both are there.
        try testbed.set("BAT0", attributes: ["charge_now": "1000000"], properties: ["POWER_SUPPLY_CHARGE_NOW": "4000000"], uevent: "change")
        #expect(probe.notes(1) == [Note("battery/BAT0/level", 0.8, previous: 0.5)])
    }

    @Test func acGoesOnlineAndOffline() throws {
        let testbed = try Testbed()
        try testbed.add("AC", acOffline)
        try testbed.add("USB", ["type": "USB", "online": "0"])
        let probe = try Probe(testbed: testbed)
        #expect(Set(probe.start().notes.map(\.description))
            == Set([Note("power/AC/online", false), Note("power/USB/online", false)].map(\.description)))

        try testbed.update("AC", ["online": "1"])
        try testbed.update("AC", ["online": "0"])
        try testbed.update("USB", ["online": "2"])  // online, programmable
        try testbed.update("AC", ["online": "1"])
        #expect(probe.notes(4) == [
            Note("power/AC/online", true, previous: false),
            Note("power/AC/online", false, previous: true),
            Note("power/USB/online", true, previous: false),
            Note("power/AC/online", true, previous: false),
        ])
    }

    @Test func hotPlugAddAndRemove() throws {
        let testbed = try Testbed()
        try testbed.add("AC", acOffline)
        let probe = try Probe(testbed: testbed)
        #expect(probe.start().notes == [Note("power/AC/online", false)])

        try testbed.add("BAT1", ["type": "Battery", "status": "Charging", "capacity": "33"])
        #expect(probe.notes(2) == [Note("battery/BAT1/state", "charging"), Note("battery/BAT1/level", 0.33)])

        try testbed.remove("BAT1")
        // "The device went away": each of its keys gets null.
        #expect(probe.notes(2) == [
            Note("battery/BAT1/state", .null, previous: "charging"),
            Note("battery/BAT1/level", .null, previous: 0.33),
        ])

        try testbed.remove("AC")
        #expect(probe.notes(1) == [Note("power/AC/online", .null, previous: false)])
        #expect(probe.waitForStatus("unavailable")?["reason"] == "no power_supply devices")

        try testbed.add("AC", ["type": "Mains", "online": "1"])
        #expect(probe.notes(1) == [Note("power/AC/online", true, previous: .null)])
        probe.waitForStatus("running")
    }

    @Test func noDevicesIsUnavailableUntilOneIsPlugged() throws {
        let testbed = try Testbed()
        let probe = try Probe(testbed: testbed)
        let (status, notes) = probe.start()
        #expect(status?["status"] == "unavailable")
        #expect(status?["reason"] == "no power_supply devices")
        #expect(notes.isEmpty)

        try testbed.add("ADP1", ["type": "Mains", "online": "1"])
        #expect(probe.notes(1) == [Note("power/ADP1/online", true)])
        probe.waitForStatus("running")
    }

    @Test func twoBatteriesAndSeveralSuppliesSideBySide() throws {
        let testbed = try Testbed()
        try testbed.add("BAT0", battery80)
        try testbed.add("BAT1", ["type": "Battery", "status": "Discharging", "capacity": "60"])
        try testbed.add("AC", acOffline)
        try testbed.add("USB", ["type": "USB", "online": "0"])
        let probe = try Probe(testbed: testbed)
        #expect(probe.start().notes.count == 6)

        try testbed.update("AC", ["online": "1"])
        try testbed.update("BAT1", ["status": "Charging", "capacity": "61"])
        try testbed.update("BAT0", ["status": "Full", "capacity": "100"])
        try testbed.update("USB", ["online": "1"])
        #expect(probe.notes(6) == [
            Note("power/AC/online", true, previous: false),
            Note("battery/BAT1/state", "charging", previous: "unplugged"),
            Note("battery/BAT1/level", 0.61, previous: 0.6),
            Note("battery/BAT0/state", "full", previous: "unplugged"),
            Note("battery/BAT0/level", 1.0, previous: 0.8),
            Note("power/USB/online", true, previous: false),
        ])
        try testbed.remove("BAT0")
        #expect(probe.notes(2).map(\.key) == ["battery/BAT0/state", "battery/BAT0/level"])
        // BAT1 is untouched by BAT0's removal.
        try testbed.update("BAT1", ["capacity": "62"])
        #expect(probe.notes(1) == [Note("battery/BAT1/level", 0.62, previous: 0.61)])
    }

    @Test func flappingWhileSuspendedFlushesOneNotificationPerKeyWithTheCount() throws {
        let testbed = try Testbed()
        try testbed.add("BAT0", battery80)
        try testbed.add("AC", acOffline)
        let probe = try Probe(testbed: testbed)
        _ = probe.start()

        #expect(probe.command("suspend").compactMap(Note.init).isEmpty)
        for round in 1...5 {
            let plugged = round % 2 == 1
            try testbed.update("BAT0", ["status": plugged ? "Charging" : "Discharging"])
            try testbed.update("AC", ["online": plugged ? "1" : "0"])
            if round == 3 { try testbed.update("BAT0", ["capacity": "79"]) }
        }
        // All ten changes are handled, and held: nothing reaches the suspended subscriber.
        #expect(probe.notesUntilSynced().isEmpty)

        let resumed = probe.resume()
        #expect(resumed.flushed == 3)
        // One per key, with how many events each stands for, in the order of each key's latest event.
        #expect(resumed.notes == [
            Note("battery/BAT0/level", 0.79, coalesced: 1, previous: 0.8, kind: "flushed"),
            Note("battery/BAT0/state", "charging", coalesced: 5, previous: "unplugged", kind: "flushed"),
            Note("power/AC/online", true, coalesced: 5, previous: false, kind: "flushed"),
        ])
        // Live again.
        try testbed.update("AC", ["online": "0"])
        #expect(probe.notes(1) == [Note("power/AC/online", false, previous: true)])
    }

    @Test func rereadTimerCatchesChangesThatCameWithoutAUevent() throws {
        let testbed = try Testbed()
        try testbed.add("BAT0", battery80)
        try testbed.add("BAT1", ["type": "Battery", "status": "Discharging", "capacity": "60"])
        let probe = try Probe(testbed: testbed, arguments: ["--reread-interval", "0.2"])
        #expect(probe.start().notes.count == 4)

        // The kernel's silent capacity step: sysfs (and the uevent file) change, no uevent.
        try testbed.update("BAT0", ["capacity": "42"], announced: false)
        #expect(probe.notes(1) == [Note("battery/BAT0/level", 0.42, previous: 0.8)])

        // A device that vanished unannounced is noticed too.
        try testbed.remove("BAT1", silently: true)
        #expect(probe.notes(2) == [
            Note("battery/BAT1/state", .null, previous: "unplugged"),
            Note("battery/BAT1/level", .null, previous: 0.6),
        ])

        // Several more periods: re-reads publish only differences, so nothing else arrives.
        usleep(700_000)
        #expect(probe.notesUntilSynced().isEmpty)
    }

    @Test func rereadOnDemandPublishesOnlyWhatDiffers() throws {
        let testbed = try Testbed()
        try testbed.add("BAT0", battery80)
        try testbed.add("AC", acOffline)
        let probe = try Probe(testbed: testbed)  // timer: one hour
        _ = probe.start()
        #expect(probe.command("reread").compactMap(Note.init).isEmpty)
        try testbed.update("BAT0", ["capacity": "77"], announced: false)
        // What the CLI does after SIGCONT.
        #expect(probe.command("reread").compactMap(Note.init) == [Note("battery/BAT0/level", 0.77, previous: 0.8)])
    }

    @Test func overflowOfTheMonitorSocketTriggersAFullReread() throws {
        let testbed = try Testbed()
        try testbed.add("BAT0", battery80)
        try testbed.add("AC", acOffline)
        let probe = try Probe(testbed: testbed)  // timer: one hour, so only the overflow can re-read
        _ = probe.start()

        // A change whose uevent was lost.
        try testbed.update("BAT0", ["capacity": "55", "status": "Charging"], announced: false)
        // Another device's uevent does not make the source read BAT0 again.
        try testbed.update("AC", ["online": "1"])
        #expect(probe.notes(1) == [Note("power/AC/online", true, previous: false)])
        #expect(probe.notesUntilSynced().isEmpty)

        // Now the monitor reports ENOBUFS (through the wrapper's injection point) on its next
        // receive, which the next uevent triggers: the source reads everything again.
        probe.command("overflow")
        try testbed.uevent("AC")
        let notes = probe.notes(2)
        #expect(Set(notes.map(\.description)) == Set([
            Note("battery/BAT0/state", "charging", previous: "unplugged"),
            Note("battery/BAT0/level", 0.55, previous: 0.8),
        ].map(\.description)))
        // The uevent itself is still received afterwards, and changes nothing.
        #expect(probe.notesUntilSynced().isEmpty)
        // And the monitor keeps working.
        try testbed.update("AC", ["online": "0"])
        #expect(probe.notes(1) == [Note("power/AC/online", false, previous: true)])
    }

    @Test func twoListenersOnOneTestbedBothSeeEveryUevent() throws {
        // umockdev names each emulated uevent socket after its descriptor number; a second process
        // whose socket has the same number takes the first one's events (Tests/README.md, "umockdev
        // test beds"). The second probe takes its low descriptors first, so its socket gets a
        // different number.
        let testbed = try Testbed()
        try testbed.add("AC", acOffline)
        let first = try Probe(testbed: testbed)
        _ = first.start()
        let second = try Probe(testbed: testbed, arguments: ["--fd-floor", "200"])
        _ = second.start()

        try testbed.update("AC", ["online": "1"])
        #expect(first.notes(1) == [Note("power/AC/online", true, previous: false)])
        #expect(second.notes(1) == [Note("power/AC/online", true, previous: false)])
    }
}
