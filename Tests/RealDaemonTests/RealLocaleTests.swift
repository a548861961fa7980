import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `notifywatch --source locale` against the REAL systemd-localed (Tests/README.md, "localed and
/// timedated"), in a private mount namespace over copies of /etc and /usr/lib/locale, on a private
/// system bus named by `--system-bus`. Only locales every system has (C.UTF-8, C, POSIX) are set,
/// so localed never runs locale-gen (and if it did, it would write the copy).
@Suite("notifywatch with the real systemd-localed", .enabled(if: canRunRealLocaled, "needs root for unshare --mount; always run under CI"))
struct RealLocaleTests {
    @Test func initialLiveSuspendedReactivatedTerminatedAndReplayed() async throws {
        let bus = try PrivateBus()
        let localed = try await RealLocaled(bus: bus, initialLocale: ["LANG=C.UTF-8"])
        let firstOwner = try await localed.start()
        try await localed.installActivation()

        let watch = try NotifyWatchRun(["--source", "locale", "--system-bus", bus.address])
        let source = await watch.next()
        #expect(source?["type"] == "source")
        #expect(source?["source"] == "locale")
        #expect(source?["status"] == "running")
        #expect(await watch.next().flatMap(Note.init) == Note("locale", ["LANG": "C.UTF-8"], coalesced: 0))

        // SetLocale (busctl, as root): localed writes its copy of /etc/default/locale and signals.
        try await localed.setLocale(["LANG=C.UTF-8", "LC_MESSAGES=POSIX"])
        #expect(await watch.next().flatMap(Note.init)
            == Note("locale", ["LANG": "C.UTF-8", "LC_MESSAGES": "POSIX"], previous: ["LANG": "C.UTF-8"]))
        #expect(localed.localeFile == "LANG=C.UTF-8\nLC_MESSAGES=POSIX\n")

        // Suspended: two changes, nothing printed; resumed: one line, coalesced 2, with localed's
        // merged result (variables not passed are kept; one equal to LANG is simplified away).
        #expect(await watch.signal(SIGUSR1, expecting: "suspended") != nil)
        try await localed.setLocale(["LANG=C"])
        await watch.waitUntilRecorded(3, eventsFor: "locale")
        try await localed.setLocale(["LANG=POSIX", "LC_TIME=C.UTF-8"])
        await watch.waitUntilRecorded(4, eventsFor: "locale")
        #expect(try await localed.locale() == ["LANG=POSIX", "LC_TIME=C.UTF-8"])
        #expect(await watch.linesArriving(within: .milliseconds(400)) == [])
        let resumed = await watch.signal(SIGUSR2, expecting: "resumed")
        #expect(resumed?["flushed"] == 1)
        #expect(await watch.next().flatMap(Note.init) == Note(
            "locale", ["LANG": "POSIX", "LC_TIME": "C.UTF-8"], coalesced: 2,
            previous: ["LANG": "C.UTF-8", "LC_MESSAGES": "POSIX"]))

        // localed exits (as after its ~30 s idle timeout): nothing to say. The next SetLocale
        // bus-activates a new localed with a new unique name; its signal is followed.
        try await localed.stop()
        #expect(await watch.linesArriving(within: .milliseconds(400)) == [])
        try await localed.setLocale(["LANG=C.UTF-8", "LC_TIME=C.UTF-8"])
        let secondOwner = await localed.owner()
        #expect(secondOwner != nil && secondOwner != firstOwner)
        #expect(await watch.next().flatMap(Note.init)
            == Note("locale", ["LANG": "C.UTF-8"], previous: ["LANG": "POSIX", "LC_TIME": "C.UTF-8"]))
        #expect(await watch.linesArriving(within: .milliseconds(300)) == [])
        try await localed.setLocale(["LANG=C.UTF-8", "LC_PAPER=POSIX"])
        #expect(await watch.next().flatMap(Note.init)
            == Note("locale", ["LANG": "C.UTF-8", "LC_PAPER": "POSIX"], previous: ["LANG": "C.UTF-8"]))

        #expect(await watch.stop(with: SIGTERM) == 0)
        #expect(await watch.rest() == [])
        #expect(watch.standardError == "")
        #expect(watch.records.last?["type"] == "unsubscribe")
        let live = watch.replayableLines
        // The current value, 1 live, suspended, resumed + 1, 2 live.
        let expected: Int = 1 + 1 + 1 + (1 + 1) + 2
        #expect(live.count == expected)
        let replay = try await watch.replay()
        #expect(replay.status == 0)
        #expect(replay.lines == live)
    }

    /// localed exited (idle) and cannot be activated (no service file): Ctrl-Z and fg re-read,
    /// and the locale stays what localed last said. (localed sees its copies of the files, this
    /// process the machine's: reading the machine's /etc/default/locale here would be wrong.)
    @Test func afterLocaledExitsFgKeepsItsLastValue() async throws {
        let bus = try PrivateBus()
        let localed = try await RealLocaled(bus: bus, initialLocale: ["LANG=C.UTF-8", "LC_MESSAGES=POSIX"])
        try await localed.start()
        let watch = try NotifyWatchRun(["--source", "locale", "--system-bus", bus.address])
        #expect(await watch.next()?["status"] == "running")
        #expect(await watch.next().flatMap(Note.init) == Note("locale", ["LANG": "C.UTF-8", "LC_MESSAGES": "POSIX"], coalesced: 0))
        try await localed.stop()
        #expect(await watch.linesArriving(within: .milliseconds(300)) == [])

        #expect(await watch.signal(SIGTSTP, expecting: "suspended") != nil)
        #expect(await watch.waitForState { $0 == "T" } == "T")
        watch.signal(SIGCONT)
        let resumed = await watch.next()
        #expect(resumed?["type"] == "resumed")
        #expect(resumed?["flushed"] == 0)
        #expect(await watch.linesArriving(within: .milliseconds(500)) == [])

        // localed comes back with a change: followed as before.
        try await localed.start()
        try await localed.setLocale(["LANG=C.UTF-8", "LC_MESSAGES=C"])
        #expect(await watch.next().flatMap(Note.init)
            == Note("locale", ["LANG": "C.UTF-8", "LC_MESSAGES": "C"], previous: ["LANG": "C.UTF-8", "LC_MESSAGES": "POSIX"]))
        #expect(await watch.stop(with: SIGTERM) == 0)
        #expect(watch.standardError == "")
    }
}
