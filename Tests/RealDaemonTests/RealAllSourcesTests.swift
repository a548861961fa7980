import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// One `notifywatch` with every source (its default), as a person runs it on a desktop: the real
/// iio-sensor-proxy (umockdev) and the real systemd-localed on one private system bus, the real
/// xdg-desktop-portal on a private session bus. The power source finds whatever this machine has
/// (usually nothing), so the tests watch the other keys only.
@Suite("notifywatch with every real daemon at once", .enabled(if: canRunRealLocaled, "needs root for unshare --mount; always run under CI"))
struct RealAllSourcesTests {
    @Test func sourcesListAndOneWatcherForAllOfThem() async throws {
        let peers = try await RealPeers()
        let (system, testbed, localed, portal, buses) = (peers.system, peers.sensors, peers.localed, peers.portal, peers.buses)

        // `notifywatch sources`: each D-Bus source can run here, with the keys it publishes.
        let list = try await runCommand(
            NotifyWatchRun.executable, ["sources", "--json"] + buses,
            environment: ChildProcess.environment(with: ["DBUS_SYSTEM_BUS_ADDRESS": nil, "DBUS_SESSION_BUS_ADDRESS": nil]))
        let listed = list.split(separator: "\n").compactMap { try? JSONValue(parsing: String($0)) }
        #expect(listed.compactMap { $0["source"]?.stringValue } == ["power", "sensors", "locale", "settings", "time", "display", "power-profile", "network", "login", "memory", "thermal"], "\(list)")
        for name in ["sensors", "locale", "settings", "time", "display"] {
            #expect(listed.first { $0["source"] == .string(name) }?["status"] == "running", "\(list)")
        }
        #expect(listed.first { $0["source"] == "sensors" }?["keys"] == ["orientation", "proximity", "light"])

        let watch = try NotifyWatchRun(["orientation", "proximity", "light", "locale", "settings/**"] + buses)
        // A source line per source, in order; then the current values.
        let sources = await watch.next(11)
        #expect(sources.compactMap { $0["source"]?.stringValue } == ["power", "sensors", "locale", "settings", "time", "display", "power-profile", "network", "login", "memory", "thermal"])
        #expect(sources.dropFirst().prefix(5).allSatisfy { $0["type"] == "source" && $0["status"] == "running" }, "\(sources)")
        // No power-profiles-daemon, NetworkManager or logind on this bus.
        #expect(sources.filter { ["power-profile", "network", "login"].contains($0["source"]) }
            .allSatisfy { $0["type"] == "source" && $0["status"] == "unavailable" }, "\(sources)")
        // PSI is there; thermal runs without zones or power-profiles-daemon.
        #expect(sources.filter { ["memory", "thermal"].contains($0["source"]) }.allSatisfy { $0["status"] == "running" }, "\(sources)")
        await watch.waitUntilRecorded(1, where: { $0["type"] == "subscribe" })
        let settings = Set(watch.records.prefix { $0["type"] == "event" }.compactMap { $0["key"]?.stringValue }
            .filter { $0.hasPrefix("settings/") })
        #expect(settings.count > 20)
        let initial = await watch.next(3 + 1 + settings.count).compactMap(Note.init)
        let current = Dictionary(initial.map { ($0.key, $0.value) }) { first, _ in first }
        #expect(initial.allSatisfy { $0.coalesced == 0 })
        #expect(current["orientation"] == "portrait")
        #expect(current["proximity"] == true)
        #expect(current["locale"] == ["LANG": "C.UTF-8"])
        #expect(current[RealPortalTests.appearanceScheme] == 0)
        #expect(current.count == 3 + 1 + settings.count)

        // SIGUSR1: changes from the three daemons, nothing printed; SIGUSR2: one line per key.
        #expect(await watch.signal(SIGUSR1, expecting: "suspended") != nil)
        try testbed.orient("left-up")
        try await localed.setLocale(["LANG=C.UTF-8", "LC_MESSAGES=POSIX"])
        try await portal.gsettings(["set", "org.gnome.desktop.interface", "color-scheme", "prefer-dark"])
        await watch.waitUntilRecorded(2, eventsFor: "orientation")
        try testbed.orient("right-up")
        await watch.waitUntilRecorded(3, eventsFor: "orientation")
        await watch.waitUntilRecorded(2, eventsFor: RealPortalTests.appearanceScheme)
        await watch.waitUntilRecorded(2, eventsFor: "locale")
        #expect(await watch.linesArriving(within: .milliseconds(400)) == [])
        let resumed = await watch.signal(SIGUSR2, expecting: "resumed")
        #expect(resumed?["flushed"] == 4)
        let flushed = await watch.next(4).compactMap(Note.init)
        #expect(Set(flushed) == [
            Note("orientation", "landscape-right", coalesced: 2, previous: "portrait"),
            Note("locale", ["LANG": "C.UTF-8", "LC_MESSAGES": "POSIX"], coalesced: 1, previous: ["LANG": "C.UTF-8"]),
            Note(RealPortalTests.gnomeScheme, "prefer-dark", coalesced: 1, previous: "default"),
            Note(RealPortalTests.appearanceScheme, 1, coalesced: 1, previous: 0),
        ])
        #expect(flushed.last?.key == "orientation")

        // Ctrl-Z: stopped while the three daemons change; fg: the sources re-read, one flush.
        #expect(await watch.signal(SIGTSTP, expecting: "suspended") != nil)
        #expect(await watch.waitForState { $0 == "T" } == "T")
        try await localed.setLocale(["LANG=C.UTF-8", "LC_MESSAGES=C.UTF-8"])
        try await portal.gsettings(["set", "org.gnome.desktop.interface", "color-scheme", "prefer-light"])
        try testbed.orient("normal")
        #expect(await eventuallyTrue {
            await busctlProperty(system, RealSensorsTests.service, RealSensorsTests.path, RealSensorsTests.service, "AccelerometerOrientation")
                == #"s "normal""#
        })
        #expect(processState(watch.pid) == "T")
        watch.signal(SIGCONT)
        let continued = await watch.next()
        #expect(continued?["type"] == "resumed")
        #expect(continued?["flushed"] == 4)
        #expect(Set(await watch.next(4).compactMap(Note.init)) == [
            Note("locale", ["LANG": "C.UTF-8"], coalesced: 1, previous: ["LANG": "C.UTF-8", "LC_MESSAGES": "POSIX"]),
            Note(RealPortalTests.gnomeScheme, "prefer-light", coalesced: 1, previous: "prefer-dark"),
            Note(RealPortalTests.appearanceScheme, 2, coalesced: 1, previous: 1),
            Note("orientation", "portrait", coalesced: 1, previous: "landscape-right"),
        ])
        #expect(await watch.linesArriving(within: .milliseconds(500)) == [])

        #expect(await watch.stop(with: SIGTERM) == 0)
        #expect(await watch.rest() == [])
        #expect(watch.standardError == "")
        let live = watch.replayableLines
        let replay = try await watch.replay()
        #expect(replay.status == 0)
        #expect(replay.lines == live)
        try testbed.stop()
    }
}
