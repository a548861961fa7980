import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `notifywatch --source settings` against the REAL xdg-desktop-portal 1.16 (Settings version 1:
/// `Read` double-wraps, no `ReadOne`) with xdg-desktop-portal-gtk and dconf, headless on Xvfb, on a
/// private session bus named by `--session-bus` (Tests/README.md, "The portal, headless"). Changes
/// are made as a user makes them, with `gsettings set`; the portal forwards each as
/// `SettingChanged`, and a colour scheme change as two (the GNOME string and the
/// `org.freedesktop.appearance` number).
@Suite("notifywatch with the real xdg-desktop-portal")
struct RealPortalTests {
    static let gnomeScheme = "settings/org.gnome.desktop.interface/color-scheme"
    static let appearanceScheme = "settings/org.freedesktop.appearance/color-scheme"
    static let cursorSize = "settings/org.gnome.desktop.interface/cursor-size"

    @Test func initialLiveSuspendedTerminatedAndReplayed() async throws {
        let portal = try await RealPortal()
        let watch = try NotifyWatchRun(["--source", "settings", "--session-bus", portal.bus.address])

        let source = await watch.next()
        #expect(source?["type"] == "source")
        #expect(source?["source"] == "settings")
        #expect(source?["status"] == "running")
        // Every setting of every namespace the portal has (ReadAll of all), coalesced 0: as many
        // lines as the recording has keys before the subscription.
        await watch.waitUntilRecorded(1, where: { $0["type"] == "subscribe" })
        let published = Set(watch.records.prefix { $0["type"] == "event" }.compactMap { $0["key"]?.stringValue })
        #expect(published.count > 20, "\(published)")
        #expect(published.allSatisfy { $0.hasPrefix("settings/") && $0.split(separator: "/").count == 3 })
        let initial = await watch.next(published.count).compactMap(Note.init)
        #expect(initial.count == published.count)
        #expect(Set(initial.map(\.key)) == published)
        #expect(initial.allSatisfy { $0.coalesced == 0 && $0.previous == nil })
        let values = Dictionary(initial.map { ($0.key, $0.value) }) { first, _ in first }
        #expect(values[Self.appearanceScheme] == 0)  // `u`, double-wrapped by Read: a number
        #expect(values[Self.gnomeScheme] == "default")  // `s`
        #expect(values[Self.cursorSize] == 24)  // `i`
        #expect(values["settings/org.gnome.desktop.interface/gtk-theme"] == "Adwaita")
        #expect(values["settings/org.gnome.desktop.interface/cursor-blink"] == true)  // `b`

        // Live: one gsettings change, two notifications (any order), each with its previous value.
        try await portal.gsettings(["set", "org.gnome.desktop.interface", "color-scheme", "prefer-dark"])
        #expect(Set(await watch.next(2).compactMap(Note.init)) == [
            Note(Self.gnomeScheme, "prefer-dark", previous: "default"),
            Note(Self.appearanceScheme, 1, previous: 0),
        ])

        // Suspended: three scheme changes and a cursor size, nothing printed; resumed: one line
        // per key with the latest value and its count, `flushed` matching.
        #expect(await watch.signal(SIGUSR1, expecting: "suspended") != nil)
        for (step, scheme) in ["prefer-light", "default", "prefer-light"].enumerated() {
            try await portal.gsettings(["set", "org.gnome.desktop.interface", "color-scheme", scheme])
            await watch.waitUntilRecorded(3 + step, eventsFor: Self.gnomeScheme)
            await watch.waitUntilRecorded(3 + step, eventsFor: Self.appearanceScheme)
        }
        try await portal.gsettings(["set", "org.gnome.desktop.interface", "cursor-size", "32"])
        await watch.waitUntilRecorded(2, eventsFor: Self.cursorSize)
        #expect(await watch.linesArriving(within: .milliseconds(400)) == [])
        let resumed = await watch.signal(SIGUSR2, expecting: "resumed")
        #expect(resumed?["flushed"] == 3)
        let flushed = await watch.next(3)
        let flushedNotes = flushed.compactMap(Note.init)
        #expect(Set(flushedNotes) == [
            Note(Self.gnomeScheme, "prefer-light", coalesced: 3, previous: "prefer-dark"),
            Note(Self.appearanceScheme, 2, coalesced: 3, previous: 1),
            Note(Self.cursorSize, 32, coalesced: 1, previous: 24),
        ])
        #expect(flushedNotes.last?.key == Self.cursorSize)  // in the order of each key's latest event
        #expect(flushed.allSatisfy { $0["t"] == resumed?["t"] })

        // The same value again: the portal says nothing, and neither does notifywatch.
        try await portal.gsettings(["set", "org.gnome.desktop.interface", "color-scheme", "prefer-light"])
        #expect(await watch.linesArriving(within: .milliseconds(500)) == [])
        try await portal.gsettings(["reset", "org.gnome.desktop.interface", "color-scheme"])
        #expect(Set(await watch.next(2).compactMap(Note.init)) == [
            Note(Self.gnomeScheme, "default", previous: "prefer-light"),
            Note(Self.appearanceScheme, 0, previous: 2),
        ])

        #expect(await watch.stop(with: SIGTERM) == 0)
        #expect(await watch.rest() == [])
        #expect(watch.standardError == "")
        #expect(watch.records.last?["type"] == "unsubscribe")
        let live = watch.replayableLines
        // The current values, 2 live, suspended, resumed + 3, 2 live.
        let expected: Int = published.count + 2 + 1 + (1 + 3) + 2
        #expect(live.count == expected)
        let replay = try await watch.replay()
        #expect(replay.status == 0)
        #expect(replay.lines == live)
    }
}
