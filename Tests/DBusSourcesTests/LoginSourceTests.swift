import DBus
import Logging
import TestSupport
import NotifyBus
import NotifyBusSources
import Testing

#if canImport(Glibc)
import Glibc
#endif

private let service = "org.freedesktop.login1"
private let managerPath = "/org/freedesktop/login1"
private let managerInterface = "org.freedesktop.login1.Manager"
private let sessionInterface = "org.freedesktop.login1.Session"

/// LoginSource against python-dbusmock's `logind` template on a private system bus. The template
/// makes sessions with `AddSession` (each with `LockedHint` and `SetLockedHint`) but has no
/// `GetSessionByPID`: the tests add one (`Mock.AddMethod`) that names this process's session,
/// or leave it out so that the source asks `/org/freedesktop/login1/session/auto`.
@Suite("LoginSource with python-dbusmock")
struct LoginSourceTests {
    let bus: PrivateBus
    let client: DBusClient

    init() async throws {
        (bus, client) = try await PrivateBus.startedWithClient()
    }

    /// Starts the mock; with `session`, adds that session and a `GetSessionByPID` that returns it
    /// for this process.
    func startMock(session: String? = "c1") async throws -> MockService {
        let mock = try await MockService(bus: bus, template: "logind", name: service)
        if let session { try await addSession(session, byPID: true) }
        return mock
    }

    func addSession(_ id: String, byPID: Bool) async throws {
        try await mockCall(client, service, managerPath, "AddSession", [
            .string(id), .string("seat0"), .uint32(1000), .string("user"), .boolean(true),
        ])
        guard byPID else { return }
        try await mockCall(client, service, managerPath, "AddMethod", [
            .string(managerInterface), .string("GetSessionByPID"), .string("u"), .string("o"),
            .string("ret = dbus.ObjectPath('/org/freedesktop/login1/session/\(id)') if args[0] == \(getpid()) else None"),
        ])
    }

    func setLocked(_ session: String, _ locked: Bool) async throws {
        _ = try await client.call(
            destination: BusName(validating: service), path: ObjectPath(validating: "\(managerPath)/session/\(session)"),
            interface: InterfaceName(validating: sessionInterface), member: "SetLockedHint", arguments: [.boolean(locked)])
    }

    func prepareForSleep(_ argument: DBusValue, signature: String = "b") async throws {
        try await mockCall(client, service, managerPath, "EmitSignal", [
            .string(managerInterface), .string("PrepareForSleep"), .string(signature),
            .array(elementSignature: "v", [.variant(argument)]),
        ])
    }

    func makeSource(
        _ notifications: NotificationBus = NotificationBus(), onWake: (@Sendable () -> Void)? = nil
    ) -> RunningSource<LoginSource> {
        let log = LogRecorder()
        let source = LoginSource(
            bus: notifications,
            configuration: .init(
                address: bus.dbusAddress,
                connection: .init(initialBackoff: .milliseconds(50), maximumBackoff: .milliseconds(200), defaultTimeout: .seconds(5)),
                onWake: onWake),
            logger: log.logger)
        return RunningSource(source, bus: notifications, log: log)
    }

    @Test func sleepWakeAndTheSessionLock() async throws {
        let mock = try await startMock()
        let wakes = Recorder<Int>()
        let running = makeSource(onWake: { wakes.append(1) })
        #expect(await running.waitFor("system/sleep", "awake"))
        #expect(await running.waitFor("session/locked", false))
        #expect(running.source.status == .running)

        try await prepareForSleep(.boolean(true))
        #expect(await running.waitFor("system/sleep", "sleeping"))
        #expect(wakes.count == 0)
        try await prepareForSleep(.boolean(false))
        #expect(await running.waitFor("system/sleep", "awake"))
        #expect(await wakes.wait(timeout: .seconds(30)) { $0.count == 1 })

        try await setLocked("c1", true)
        #expect(await running.waitFor("session/locked", true))
        try await setLocked("c1", false)
        #expect(await running.waitFor("session/locked", false))
        await running.source.reread()
        #expect(running.values("system/sleep") == ["awake", "sleeping", "awake"])
        #expect(running.values("session/locked") == [false, true, false])
        try await running.stop()
        _ = mock
    }

    @Test func withoutGetSessionByPIDTheAutoSessionNamesTheSession() async throws {
        let mock = try await startMock(session: nil)
        // `auto` is the caller's session; its Id names the object logind signals changes on.
        try await addSession("c2", byPID: false)
        try await addSession("auto", byPID: false)
        try await mockCall(client, service, "\(managerPath)/session/auto", "UpdateProperties", [
            .string(sessionInterface), .vardict([("Id", .string("c2"))]),
        ])
        try await setLocked("c2", true)
        let running = makeSource()
        #expect(await running.waitFor("session/locked", true))
        try await setLocked("auto", false)  // not the session's object: ignored
        try await setLocked("c2", false)
        #expect(await running.waitFor("session/locked", false))
        try await setLocked("c2", true)
        #expect(await running.waitFor("session/locked", true))
        #expect(running.values("session/locked") == [true, false, true])
        try await running.stop()
        _ = mock
    }

    @Test func withoutASessionThereIsNoLockKeyUntilOneIsFound() async throws {
        let mock = try await startMock(session: nil)
        let running = makeSource()
        #expect(await running.waitFor("system/sleep", "awake"))
        #expect(await running.waitForStatus("running"))
        // A process outside any session is normal (a service, a container): said at debug only.
        #expect(await eventually(timeout: .seconds(30)) {
            running.problems.all.contains { $0.level == .debug && $0.message.contains("no logind session") }
        })
        #expect(!running.problems.recent.contains { $0.contains("no logind session") })
        #expect(running.bus.value(forKey: "session/locked") == nil)
        // The session appears; the next re-read finds it.
        try await addSession("c3", byPID: true)
        try await setLocked("c3", true)
        await running.source.reread()
        #expect(await running.waitFor("session/locked", true))
        try await running.stop()
        _ = mock
    }

    @Test func changesWhileSuspendedGiveOneNotificationPerKeyWithTheirCounts() async throws {
        let mock = try await startMock()
        let notifications = NotificationBus()
        let running = makeSource(notifications)
        #expect(await running.waitFor("system/sleep", "awake"))
        #expect(await running.waitFor("session/locked", false))
        let held = Recorder<SubscriptionEvent>()
        let subscriber = notifications.subscribe(["system/sleep", "session/locked"]) { held.append($0) }
        subscriber.suspend()
        try await setLocked("c1", true)
        #expect(await running.waitFor("session/locked", true))
        for sleeping in [true, false, true, false] {
            try await prepareForSleep(.boolean(sleeping))
            #expect(await running.waitFor("system/sleep", sleeping ? "sleeping" : "awake"))
        }
        subscriber.resume()
        let flushed = held.all.compactMap(\.notification)
        #expect(flushed.count == 2)
        #expect(flushed.first { $0.key == "session/locked" }?.value == true)
        #expect(flushed.first { $0.key == "session/locked" }?.coalesced == 1)
        #expect(flushed.first { $0.key == "system/sleep" }?.value == "awake")
        #expect(flushed.first { $0.key == "system/sleep" }?.coalesced == 4)
        try await running.stop()
        _ = mock
    }

    @Test func absentIsUnavailableThenFollowedWhenItComesAndGoes() async throws {
        let running = makeSource()
        #expect(await eventually(timeout: .seconds(30)) {
            running.source.status == .unavailable(reason: "systemd-logind (org.freedesktop.login1) is not running")
        })
        #expect(running.bus.value(forKey: "system/sleep") == nil)
        let mock = try await startMock()
        #expect(await running.waitFor("system/sleep", "awake"))
        #expect(await running.waitForStatus("running"))
        // The session may have been looked up before the mock had it: a re-read finds it.
        await running.source.reread()
        #expect(await running.waitFor("session/locked", false))
        try await setLocked("c1", true)
        #expect(await running.waitFor("session/locked", true))
        try await mock.stop()
        #expect(await running.waitForStatus("unavailable"))
        #expect(running.bus.value(forKey: "session/locked") == true)
        let again = try await startMock()
        #expect(await running.waitForStatus("running"))
        await running.source.reread()
        #expect(await running.waitFor("session/locked", false))
        try await running.stop()
        _ = again
    }

    @Test func valuesOfTheWrongTypeAreSkippedAndReported() async throws {
        let mock = try await startMock()
        let running = makeSource()
        #expect(await running.waitFor("session/locked", false))
        try await prepareForSleep(.string("yes"), signature: "s")
        try await mockCall(client, service, "\(managerPath)/session/c1", "UpdateProperties", [
            .string(sessionInterface), .vardict([("LockedHint", .uint32(1))]),
        ])
        #expect(await eventually(timeout: .seconds(30)) { running.problems.recent.contains { $0.contains("expected 'b'") && $0.contains("LockedHint") } })
        #expect(await eventually(timeout: .seconds(30)) { running.problems.recent.contains { $0.contains("PrepareForSleep") } })
        #expect(running.problems.all.contains {
            $0.message.contains("LockedHint") && $0.metadata["key"] == "session/locked" && $0.metadata["source"] == "login"
        })
        try await prepareForSleep(.boolean(true))
        #expect(await running.waitFor("system/sleep", "sleeping"))
        try await setLocked("c1", true)
        #expect(await running.waitFor("session/locked", true))
        #expect(running.values("session/locked") == [false, true])
        #expect(running.values("system/sleep") == ["awake", "sleeping"])
        try await running.stop()
        _ = mock
    }

    /// `SystemSources.all` wires the wake to the other sources: the locale stand-in's file
    /// changes without a signal (localed re-reads it only when asked), and the wake publishes it.
    @Test func aWakeMakesTheOtherSourcesReread() async throws {
        let logind = try await startMock()
        let localeFile = bus.directory + "/locale"
        try writeFile(localeFile, "LANG=C.UTF-8\n")
        let localed = try await MockService(
            bus: bus, template: fixture("locale1.py"), name: "org.freedesktop.locale1",
            parameters: #"{"locale": ["LANG=C.UTF-8"], "locale_file": "\#(localeFile)"}"#)
        let notifications = NotificationBus()
        let sources = SystemSources.all(bus: notifications, options: .init(systemBus: bus.dbusAddress, only: ["locale", "login"]))
        #expect(sources.map(\.name) == ["locale", "login"])
        let events = Recorder<SubscriptionEvent>()
        let subscription = notifications.subscribe([.all]) { events.append($0) }
        let tasks = sources.map { source in Task { try await source.run() } }
        #expect(await eventually(timeout: .seconds(30)) { notifications.value(forKey: "locale") == ["LANG": "C.UTF-8"] })
        #expect(await eventually(timeout: .seconds(30)) { notifications.value(forKey: "system/sleep") == "awake" })

        try replaceFile(localeFile, "LANG=de_DE.UTF-8\n")
        try await prepareForSleep(.boolean(true))
        #expect(await eventually(timeout: .seconds(30)) { notifications.value(forKey: "system/sleep") == "sleeping" })
        #expect(notifications.value(forKey: "locale") == ["LANG": "C.UTF-8"])
        try await prepareForSleep(.boolean(false))
        #expect(await eventually(timeout: .seconds(30)) { notifications.value(forKey: "locale") == ["LANG": "de_DE.UTF-8"] })
        let order = events.all.compactMap(\.notification).map(\.key)
        #expect(order.suffix(2) == ["system/sleep", "locale"])
        for task in tasks { task.cancel() }
        for task in tasks { try await task.value }
        subscription.cancel()
        _ = (logind, localed)
    }

    @Test func sessionPathsAreEncodedAsLogindDoes() {
        #expect(LoginSource.sessionPath(id: "c1") == "/org/freedesktop/login1/session/c1")
        #expect(LoginSource.sessionPath(id: "2") == "/org/freedesktop/login1/session/_32")
        #expect(LoginSource.sessionPath(id: "12") == "/org/freedesktop/login1/session/_312")
        #expect(LoginSource.sessionPath(id: "a-b") == "/org/freedesktop/login1/session/a_2db")
        #expect(LoginSource.sessionPath(id: "") == "/org/freedesktop/login1/session/_")
    }
}
