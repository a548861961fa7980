import DBus
import NotifyBus
import NotifyBusSources
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

private let service = "org.freedesktop.timedate1"
private let path = "/org/freedesktop/timedate1"

/// Points the link at `path` to `target` by an atomic rename, as timedated and `ln -sf` through a
/// temporary name do.
func retargetLink(_ path: String, to target: String) throws {
    unlink(path + ".new")
    guard symlink(target, path + ".new") == 0, rename(path + ".new", path) == 0 else {
        throw HarnessError("retargeting \(path): errno \(errno)")
    }
}

// Moments around Berlin's spring transition of 2024 (UTC seconds).
/// 2024-03-30T22:59:58Z: 23:59:58 CET on the 30th.
private let beforeMidnight: Int64 = 1_711_839_598
/// 2024-03-30T23:00:00Z: midnight CET, the 31st begins.
private let midnight: Int64 = 1_711_839_600
/// 2024-03-31T01:00:00Z: 02:00 CET becomes 03:00 CEST.
private let springForward: Int64 = 1_711_846_800
/// 2024-03-31T22:00:00Z: midnight CEST, the 1st of April begins.
private let nextMidnight: Int64 = 1_711_922_400

/// TimeSource with an injected clock, a link in a private directory and, where a test says,
/// a timedated stand-in (python-dbusmock's `timedated` template) on a private system bus.
@Suite("TimeSource")
struct TimeSourceTests {
    let bus: PrivateBus
    let client: DBusClient
    /// A fake /etc holding `localtime`.
    let etc: String

    init() async throws {
        (bus, client) = try await PrivateBus.startedWithClient()
        etc = bus.directory + "/etc"
        mkdir(etc, 0o755)
    }

    var localtime: String { etc + "/localtime" }

    func makeSource(clock: ManualWallClock, localtime: String? = nil) -> RunningSource<TimeSource> {
        let notifications = NotificationBus()
        let log = LogRecorder()
        let source = TimeSource(
            bus: notifications,
            configuration: .init(
                address: bus.dbusAddress, localtime: localtime ?? self.localtime, clock: clock,
                connection: .init(initialBackoff: .milliseconds(50), maximumBackoff: .milliseconds(200), defaultTimeout: .seconds(5))),
            logger: log.logger)
        return RunningSource(source, bus: notifications, log: log)
    }

    func waitForDeadline(_ clock: ManualWallClock, _ deadline: Int64) async -> Bool {
        await eventually(timeout: .seconds(10)) { clock.armedDeadlines == [deadline] }
    }

    @Test func crossesMidnightATransitionAndClockStepsOnAnInjectedClock() async throws {
        try retargetLink(localtime, to: "../usr/share/zoneinfo/Europe/Berlin")
        let clock = ManualWallClock(now: beforeMidnight)
        let running = makeSource(clock: clock)
        #expect(await running.waitFor("time/date", "2024-03-30"))
        #expect(running.values("time/zone") == ["Europe/Berlin"])
        #expect(running.values("time/utc-offset") == [3600])
        #expect(running.source.status == .running)
        // The source waits for midnight, and nothing else.
        #expect(await waitForDeadline(clock, midnight))

        clock.advance(to: midnight)
        #expect(await running.waitFor("time/date", "2024-03-31"))
        // Next: the transition comes before the next midnight.
        #expect(await waitForDeadline(clock, springForward))
        clock.advance(to: springForward)
        #expect(await running.waitFor("time/utc-offset", 7200))
        #expect(await waitForDeadline(clock, nextMidnight))
        #expect(running.values("time/date") == ["2024-03-30", "2024-03-31"])

        // The clock is set forward into summer, then back into winter: each step is re-evaluated.
        clock.set(to: 1_719_800_000)  // 2024-07-01T02:13:20Z, 04:13 CEST
        #expect(await running.waitFor("time/date", "2024-07-01"))
        #expect(await waitForDeadline(clock, 1_719_871_200))  // 2024-07-01T22:00:00Z
        clock.set(to: 1_704_067_200)  // 2024-01-01T00:00:00Z, 01:00 CET
        #expect(await running.waitFor("time/utc-offset", 3600))
        #expect(await running.waitFor("time/date", "2024-01-01"))
        #expect(running.values("time/date") == ["2024-03-30", "2024-03-31", "2024-07-01", "2024-01-01"])
        #expect(running.values("time/utc-offset") == [3600, 7200, 3600])
        #expect(running.values("time/zone") == ["Europe/Berlin"])
        // A re-read publishes nothing new.
        await running.source.reread()
        #expect(running.notifications.count == 8)
        try await running.stop()
        #expect(clock.armedDeadlines == [])
    }

    @Test func changesWhileSuspendedGiveOneNotificationPerKey() async throws {
        try retargetLink(localtime, to: "/usr/share/zoneinfo/America/Adak")
        // 2024-03-09T23:59:59 HST (-10) is 2024-03-10T09:59:59Z; Adak springs forward at 02:00 HST (12:00Z).
        let clock = ManualWallClock(now: 1_710_064_799)
        let running = makeSource(clock: clock)
        #expect(await running.waitFor("time/date", "2024-03-09"))
        #expect(running.values("time/utc-offset") == [-36000])
        let held = Recorder<SubscriptionEvent>()
        let subscriber = running.bus.subscribe(["time/*"]) { held.append($0) }
        subscriber.suspend()
        #expect(await waitForDeadline(clock, 1_710_064_800))
        clock.advance(to: 1_710_064_800)                       // midnight: the 10th
        #expect(await running.waitFor("time/date", "2024-03-10"))
        #expect(await waitForDeadline(clock, 1_710_072_000))   // 12:00Z: HDT (-9)
        clock.advance(to: 1_710_072_000)
        #expect(await running.waitFor("time/utc-offset", -32400))
        try retargetLink(localtime, to: "/usr/share/zoneinfo/Pacific/Kiritimati")  // +14: already the 11th
        #expect(await running.waitFor("time/date", "2024-03-11"))
        #expect(await running.waitFor("time/zone", "Pacific/Kiritimati"))
        #expect(await running.waitFor("time/utc-offset", 50400))
        subscriber.resume()
        let flushed = held.all.compactMap(\.notification)
        // In the order of each key's latest event: the retarget published zone, offset, date.
        #expect(flushed.map(\.key) == ["time/zone", "time/utc-offset", "time/date"])
        #expect(Dictionary(uniqueKeysWithValues: flushed.map { ($0.key, $0.coalesced) })
            == ["time/date": 2, "time/utc-offset": 2, "time/zone": 1])
        #expect(flushed.first { $0.key == "time/date" }?.value == "2024-03-11")
        try await running.stop()
    }

    @Test func theLinkIsTheTruthWithoutTimedated() async throws {
        try retargetLink(localtime, to: "../usr/share/zoneinfo/Europe/Berlin")
        let clock = ManualWallClock(now: 1_700_000_000)  // 2023-11-14T22:13:20Z
        let running = makeSource(clock: clock)
        #expect(await running.waitFor("time/zone", "Europe/Berlin"))
        #expect(await running.waitFor("time/date", "2023-11-14"))
        // Retargeted behind timedated's back (no timedated at all here): seen by the watch.
        try retargetLink(localtime, to: "/usr/share/zoneinfo/Pacific/Kiritimati")
        #expect(await running.waitFor("time/zone", "Pacific/Kiritimati"))
        #expect(await running.waitFor("time/date", "2023-11-15"))
        #expect(await running.waitFor("time/utc-offset", 50400))
        #expect(await waitForDeadline(clock, 1_700_042_400))
        try retargetLink(localtime, to: "/usr/share/zoneinfo/UTC")
        #expect(await running.waitFor("time/zone", "UTC"))
        #expect(await running.waitFor("time/utc-offset", 0))
        #expect(await running.waitFor("time/date", "2023-11-14"))  // published after zone and offset
        // No link at all is UTC too: nothing changes.
        let published = running.notifications.count
        unlink(localtime)
        await running.source.reread()
        #expect(running.notifications.count == published)
        try retargetLink(localtime, to: "../usr/share/zoneinfo/Asia/Kolkata")
        #expect(await running.waitFor("time/zone", "Asia/Kolkata"))
        #expect(await running.waitFor("time/utc-offset", 19800))
        // A zone without data counts as UTC, and says so.
        try retargetLink(localtime, to: "/usr/share/zoneinfo/Nowhere/Special")
        #expect(await running.waitFor("time/zone", "Nowhere/Special"))
        #expect(await running.waitFor("time/utc-offset", 0))
        #expect(running.problems.recent.contains { $0.contains("Nowhere/Special") && $0.contains("UTC") })
        #expect(running.source.status == .running)
        #expect(running.statuses.all.allSatisfy { !$0.isSettled || $0 == .running }, "\(running.statuses.all)")
        try await running.stop()
    }

    @Test func timedatedPromptsAReReadAndNamesAPlainFile() async throws {
        // The link's directory does not exist yet: only timedated's signal can prompt a read.
        let hidden = bus.directory + "/later"
        let link = hidden + "/localtime"
        let mock = try await MockService(bus: bus, template: "timedated", name: service, parameters: #"{"Timezone": "Europe/Berlin"}"#)
        let clock = ManualWallClock(now: 1_700_000_000)
        let running = makeSource(clock: clock, localtime: link)
        #expect(await running.waitFor("time/zone", "UTC"))
        mkdir(hidden, 0o755)
        try retargetLink(link, to: "/usr/share/zoneinfo/America/Adak")
        _ = try await client.call(
            destination: BusName(validating: service), path: ObjectPath(validating: path), interface: InterfaceName(validating: service),
            member: "SetTimezone", arguments: [.string("America/Adak"), .boolean(false)])
        #expect(await running.waitFor("time/zone", "America/Adak"))
        #expect(await running.waitFor("time/utc-offset", -36000))

        // A plain file (a copy of the zone's data): timedated names it, the file gives the offsets.
        unlink(link)
        _ = try await runCommand("/bin/cp", ["/usr/share/zoneinfo/Europe/Berlin", link], environment: bus.environment())
        try await mockCall(client, service, path, "UpdateProperties", [.string(service), .vardict([("Timezone", .string("Europe/Berlin"))])])
        #expect(await running.waitFor("time/zone", "Europe/Berlin"))
        #expect(await running.waitFor("time/utc-offset", 3600))

        // A Timezone of the wrong type is reported and skipped.
        try await mockCall(client, service, path, "UpdateProperties", [.string(service), .vardict([("Timezone", .int32(7))])])
        #expect(await eventually { running.problems.recent.contains { $0.contains("Timezone has type 'i'") } })
        #expect(running.values("time/zone") == ["UTC", "America/Adak", "Europe/Berlin"])
        // timedated leaves: nothing changes, the source stays running.
        try await mock.stop()
        await running.source.reread()
        #expect(running.source.status == .running)
        #expect(running.values("time/zone") == ["UTC", "America/Adak", "Europe/Berlin"])
        try await running.stop()
    }
}
