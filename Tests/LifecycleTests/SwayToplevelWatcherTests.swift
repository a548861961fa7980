import NotifyBusLifecycle
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The sway backend against a real headless sway with foot windows, and against a fake sway.
@Suite struct SwayToplevelWatcherTests {
    @Test(.enabled(if: SwayBedEnvironment.testsRun))
    func reportsTheWindowsFocusHidingAndClosing() async throws {
        let sway = try await HeadlessSway()
        defer { sway.stop() }
        let a = try await sway.openWindow(appID: "org.example.A")
        let b = try await sway.openWindow(appID: "org.example.B")
        let harness = try await SwayWatcherHarness(socketPath: sway.ipcSocket)
        #expect(harness.compositorPID == sway.pid)

        // The first list: both windows, the focused one (the last opened) activated.
        let first = try #require(await harness.windows { _ in true })
        #expect(first.windows == [
            ToplevelWindow(id: a.id, appID: "org.example.A", pid: a.pid, activated: false),
            ToplevelWindow(id: b.id, appID: "org.example.B", pid: b.pid, activated: true),
        ])

        // A focus change shows within 100 ms of swaymsg returning.
        var mark = harness.received.count
        try await sway.focus(appID: "org.example.A")
        let returned = ContinuousClock.now
        let focused = try #require(await harness.windows(after: mark) { $0.activatedAppIDs == ["org.example.A"] })
        #expect(focused.time - returned < .milliseconds(100), "reported \(focused.time - returned) after swaymsg returned")
        #expect(focused.windows.count == 2)

        // Hidden in the scratchpad: still there, not activated.
        mark = harness.received.count
        try await sway.hide(appID: "org.example.A")
        let hidden = try #require(await harness.windows(after: mark) { $0.window("org.example.A")?.activated == false })
        #expect(hidden.windows.map(\.appID) == ["org.example.A", "org.example.B"])

        // Back from the scratchpad, then B closed.
        mark = harness.received.count
        try await sway.focus(appID: "org.example.A")
        #expect(await harness.windows(after: mark) { $0.count == 2 && $0.activatedAppIDs == ["org.example.A"] } != nil)
        mark = harness.received.count
        try await sway.close(appID: "org.example.B")
        let closed = try #require(await harness.windows(after: mark) { $0.map(\.appID) == ["org.example.A"] })
        #expect(closed.windows == [ToplevelWindow(id: a.id, appID: "org.example.A", pid: a.pid, activated: true)])

        // No update repeats the one before it.
        let lists = harness.updates.compactMap { if case .windows(let windows) = $0 { windows } else { nil } }
        #expect(zip(lists, lists.dropFirst()).allSatisfy { $0 != $1 })
        #expect(harness.lostReasons.isEmpty)
    }

    @Test(.enabled(if: SwayBedEnvironment.testsRun))
    func swayKilledIsLostOnce() async throws {
        let sway = try await HeadlessSway()
        defer { sway.stop() }
        try await sway.openWindow(appID: "org.example.A")
        let harness = try await SwayWatcherHarness(socketPath: sway.ipcSocket)
        #expect(await harness.windows { $0.count == 1 } != nil)
        kill(sway.pid, SIGKILL)
        let reason = try #require(await harness.lost())
        #expect(reason.contains("closed") || reason.contains("hung up") || reason.contains("reset"), "\(reason)")
        try await Task.sleep(for: .milliseconds(200))
        #expect(harness.lostReasons.count == 1)
        if case .lost = harness.updates.last {} else { Issue.record("an update came after .lost: \(harness.updates)") }
    }

    @Test(.enabled(if: SwayBedEnvironment.testsRun))
    func nothingIsReportedAfterStop() async throws {
        let sway = try await HeadlessSway()
        defer { sway.stop() }
        try await sway.openWindow(appID: "org.example.A")
        let harness = try await SwayWatcherHarness(socketPath: sway.ipcSocket)
        #expect(await harness.windows { $0.count == 1 } != nil)
        try await harness.stopWatcher()
        let count = harness.received.count
        try await sway.openWindow(appID: "org.example.B")
        sway.stop()
        try await Task.sleep(for: .milliseconds(200))
        #expect(harness.received.count == count)
    }

    @Test func noSocketIsAnError() async throws {
        let missing = "/tmp/notifybus-no-such-sway-\(getpid()).sock"
        await #expect(throws: SwayIPCError.connectFailed(path: missing, errno: ENOENT)) {
            _ = try await SwayWatcherHarness(socketPath: missing)
        }
        let notListening = try SwayFakeServer(listening: false)
        await #expect(throws: SwayIPCError.connectFailed(path: notListening.path, errno: ECONNREFUSED)) {
            _ = try await SwayWatcherHarness(socketPath: notListening.path)
        }
        let long = "/tmp/" + String(repeating: "x", count: 200)
        await #expect(throws: SwayIPCError.socketPathTooLong(long)) { _ = try await SwayWatcherHarness(socketPath: long) }
        if getenv("SWAYSOCK") == nil {
            await #expect(throws: SwayIPCError.noSocketPath) { _ = try await SwayWatcherHarness(socketPath: nil) }
        }
        #expect(SwayIPCError.connectFailed(path: missing, errno: ENOENT).description.contains("No such file or directory"))
    }

    @Test func aPeerWithoutTheMagicIsLost() async throws {
        let server = try SwayFakeServer()
        let harness = try await SwayWatcherHarness(socketPath: server.path)
        let requests = try server.accept()
        #expect(requests == SwayFakeServer.message(type: 2, payload: #"["window","workspace"]"#)
            + SwayFakeServer.message(type: 4, payload: ""))
        #expect(harness.compositorPID == getpid())
        server.send(Array("HTTP/1.1 400 Bad Request\r\n\r\n".utf8))
        #expect(await harness.lost() == SwayIPCError.badMagic.description)
        #expect(harness.updates.count == 1)
    }

    @Test func anOversizedMessageIsLostBeforeItIsRead() async throws {
        let server = try SwayFakeServer()
        let harness = try await SwayWatcherHarness(socketPath: server.path)
        _ = try server.accept()
        server.send(SwayFakeServer.message(type: 2, payload: #"{"success": true}"#))
        // Announces 16 MiB + 1, sends the header and a little: the watcher gives up at the header.
        server.send(SwayFakeServer.message(type: 4, payload: String(repeating: " ", count: 1000), length: 16 << 20 + 1))
        #expect(await harness.lost() == SwayIPCError.messageTooLarge(length: 16 << 20 + 1, limit: 16 << 20).description)
        #expect(harness.updates.count == 1)
    }

    @Test func aTreeThatIsNotJSONIsLost() async throws {
        let server = try SwayFakeServer()
        let harness = try await SwayWatcherHarness(socketPath: server.path)
        _ = try server.accept()
        server.send(SwayFakeServer.message(type: 2, payload: #"{"success": true}"#))
        server.send(SwayFakeServer.message(type: 4, payload: #"{"nodes": [{"id": 7, "pid": 12"#))
        let reason = try #require(await harness.lost())
        #expect(reason.hasPrefix("sway sent a tree that is not JSON"), "\(reason)")
    }

    @Test func messagesCutInPiecesAreRead() async throws {
        let server = try SwayFakeServer()
        let harness = try await SwayWatcherHarness(socketPath: server.path)
        _ = try server.accept()
        let tree = #"""
            {"id": 1, "type": "root", "nodes": [{"id": 2, "type": "output", "nodes": [{"id": 3, "type": "workspace",
            "name": "__i3_scratch", "floating_nodes": [{"id": 9, "type": "floating_con", "pid": 40, "app_id": "org.example.H",
            "focused": false, "nodes": []}]}]}, {"id": 4, "type": "output", "nodes": [{"id": 5, "type": "workspace", "nodes": [
            {"id": 6, "type": "con", "pid": 41, "app_id": "org.example.A", "focused": true, "nodes": []},
            {"id": 7, "type": "con", "pid": 42, "app_id": null, "focused": false, "nodes": []}]}]}]}
            """#
        let bytes = SwayFakeServer.message(type: 2, payload: #"{"success": true}"#)
            + SwayFakeServer.message(type: 0x8000_0003, payload: #"{"change": "focus"}"#)
            + SwayFakeServer.message(type: 4, payload: tree)
        for index in bytes.indices {
            server.send([bytes[index]])
            if index % 64 == 0 { try await Task.sleep(for: .milliseconds(1)) }
        }
        let windows = try #require(await harness.windows { _ in true })
        #expect(windows.windows == [
            ToplevelWindow(id: 6, appID: "org.example.A", pid: 41, activated: true),
            ToplevelWindow(id: 7, appID: nil, pid: 42, activated: false),
            ToplevelWindow(id: 9, appID: "org.example.H", pid: 40, activated: false),
        ])
        // The event, which came while the tree was asked for, asks for it once more.
        #expect(server.receive(14) == SwayFakeServer.message(type: 4, payload: ""))
        #expect(harness.lostReasons.isEmpty)
    }
}
