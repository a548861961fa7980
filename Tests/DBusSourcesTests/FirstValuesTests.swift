import DBus
import NotifyBus
import NotifyBusSources
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

// A source says `running` only once its first values are published (specification: Source keys and values), so that a
// subscriber that starts at `running` (notifywatch, notifybusd) has them among its initial values.
// Each test looks at the bus's store at the very moment the source reported `running` (taken on
// the source's loop thread as it logged the change, see `LogRecorder.snapshotStore(of:)`).

extension LoginSourceTests {
    /// logind slow to name this process's session: `running` waits for the session's lock (it
    /// once came 9 ms after `running`, a live event where an initial value belonged).
    @Test func theSessionsLockIsPublishedBeforeRunning() async throws {
        let mock = try await startMock(session: nil)
        try await addSession("c1", byPID: false)
        try await mockCall(client, "org.freedesktop.login1", "/org/freedesktop/login1", "AddMethod", [
            .string("org.freedesktop.login1.Manager"), .string("GetSessionByPID"), .string("u"), .string("o"),
            .string("import time\ntime.sleep(0.3)\nret = dbus.ObjectPath('/org/freedesktop/login1/session/c1')"),
        ])
        try await setLocked("c1", true)
        let running = makeSource()
        #expect(await running.waitForStatus("running"))
        #expect(await running.storeWhenFirstRunning() == ["system/sleep": "awake", "session/locked": true])
        #expect(running.values("session/locked") == [true])
        try await running.stop()
        _ = mock
    }

    /// No session for this process (no `GetSessionByPID`, no `auto` session): running once that
    /// is known, with `system/sleep` alone.
    @Test func withoutASessionRunningComesOnceThatIsKnown() async throws {
        let mock = try await startMock(session: nil)
        let running = makeSource()
        #expect(await running.waitForStatus("running"))
        #expect(await running.storeWhenFirstRunning() == ["system/sleep": "awake"])
        #expect(running.problems.all.contains { $0.message.hasPrefix("no logind session found for this process") })
        try await running.stop()
        _ = mock
    }
}

extension LocaleSourceTests {
    @Test func theLocaleIsPublishedBeforeRunning() async throws {
        let mock = try await startMock(["LANG=de_DE.UTF-8"])
        let running = makeSource()
        #expect(await running.waitForStatus("running"))
        #expect(await running.storeWhenFirstRunning() == ["locale": ["LANG": "de_DE.UTF-8"]])
        try await running.stop()
        _ = mock
    }
}

extension NetworkSourceTests {
    @Test func connectivityAndMeteredArePublishedBeforeRunning() async throws {
        let mock = try await startMock(metered: 1)
        let running = makeSource()
        #expect(await running.waitForStatus("running"))
        #expect(await running.storeWhenFirstRunning() == ["network/connectivity": "full", "network/metered": true])
        try await running.stop()
        _ = mock
    }
}

extension PortalSettingsSourceTests {
    @Test func everySettingIsPublishedBeforeRunning() async throws {
        let portal = try await startPortal(version: 2)
        let running = makeSource()
        #expect(await running.waitForStatus("running"))
        let store = try #require(await running.storeWhenFirstRunning())
        #expect(store.count > 5)
        #expect(store["settings/org.freedesktop.appearance/color-scheme"] == .integer(0))
        // Nothing changed since: the store then is the store now.
        #expect(store == Dictionary(uniqueKeysWithValues: running.bus.snapshot().map { ($0.key, $0.value) }))
        try await running.stop()
        _ = portal
    }
}

extension SensorProxySourceTests {
    /// The claimed sensors' first trusted readings come before `running`.
    @Test func everySensorsReadingIsPublishedBeforeRunning() async throws {
        let mock = try await startMock()
        let running = makeSource()
        #expect(await running.waitForStatus("running"))
        #expect(await running.storeWhenFirstRunning() == [
            "orientation": "portrait", "proximity": false, "light": ["level": 42.0, "unit": "lux"],
        ])
        try await running.stop()
        _ = mock
    }
}

extension PowerProfileSourceTests {
    @Test func theProfileIsPublishedBeforeRunning() async throws {
        let new = try await startNew("power-saver")
        let running = makeSource()
        #expect(await running.waitForStatus("running"))
        #expect(await running.storeWhenFirstRunning() == ["power/profile": "power-saver"])
        try await running.stop()
        _ = new
    }
}

extension TimeSourceTests {
    @Test func theZoneOffsetAndDateArePublishedBeforeRunning() async throws {
        try retargetLink(localtime, to: "../usr/share/zoneinfo/Europe/Berlin")
        let running = makeSource(clock: ManualWallClock(now: 1_711_839_600))  // 2024-03-31T00:00 CET
        #expect(await running.waitForStatus("running"))
        #expect(await running.storeWhenFirstRunning() == [
            "time/zone": "Europe/Berlin", "time/utc-offset": 3600, "time/date": "2024-03-31",
        ])
        try await running.stop()
    }
}
