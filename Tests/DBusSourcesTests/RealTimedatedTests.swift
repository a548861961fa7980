import DBus
import NotifyBus
import NotifyBusSources
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// TimeSource against the real systemd-timedated in a private mount namespace (its own /etc).
@Suite("TimeSource with the real systemd-timedated", .enabled(if: canRunRealLocaled, "needs root for unshare --mount; always run under CI"))
struct RealTimedatedTests {
    @Test func setTimezoneARetargetedLinkAnIdleExitAndActivation() async throws {
        let bus = try PrivateBus()
        let timedated = try await RealTimedated(bus: bus, initialZone: "Europe/Berlin")
        let firstOwner = try await timedated.start()
        try await timedated.installActivation()

        let notifications = NotificationBus()
        let log = LogRecorder()
        let clock = ManualWallClock(now: 1_700_000_000)  // 2023-11-14T22:13:20Z
        let source = TimeSource(
            bus: notifications,
            configuration: .init(
                address: bus.dbusAddress, localtime: timedated.localtime, clock: clock,
                connection: .init(initialBackoff: .milliseconds(50), maximumBackoff: .milliseconds(200), defaultTimeout: .seconds(5))),
            logger: log.logger)
        let running = RunningSource(source, bus: notifications, log: log)
        #expect(await running.waitFor("time/zone", "Europe/Berlin"))
        #expect(await running.waitFor("time/utc-offset", 3600))
        #expect(await running.waitFor("time/date", "2023-11-14"))

        // SetTimezone through timedated: it retargets the copy's link and signals.
        try await timedated.setTimezone("America/Adak")
        #expect(await running.waitFor("time/zone", "America/Adak"))
        #expect(await running.waitFor("time/utc-offset", -36000))
        #expect(readLink(timedated.localtime) == "../usr/share/zoneinfo/America/Adak")

        // A retarget behind timedated's back: seen by the watch on /etc.
        try retargetLink(timedated.localtime, to: "../usr/share/zoneinfo/Pacific/Kiritimati")
        #expect(await running.waitFor("time/zone", "Pacific/Kiritimati"))
        #expect(await running.waitFor("time/date", "2023-11-15"))

        // timedated goes away (SIGTERM, as its idle exit ends it): nothing changes, still running.
        try await timedated.stop()
        await running.source.reread()
        #expect(running.source.status == .running)
        // A call activates it again, under a new unique name; its change is followed.
        try await timedated.setTimezone("UTC")
        #expect(await running.waitFor("time/zone", "UTC"))
        #expect(await running.waitFor("time/utc-offset", 0))
        let secondOwner = try await bus.waitForOwner(of: RealTimedated.name)
        #expect(secondOwner != firstOwner)
        #expect(running.values("time/zone") == ["Europe/Berlin", "America/Adak", "Pacific/Kiritimati", "UTC"])
        #expect(running.statuses.all.allSatisfy { !$0.isSettled || $0 == .running }, "\(running.statuses.all)")
        try await running.stop()
    }
}

/// The target of the link at `path`, one level.
private func readLink(_ path: String) -> String? {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink(path, &buffer, buffer.count)
    guard count >= 0 else { return nil }
    return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
