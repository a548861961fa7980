import EpollLoop
import NotifyBusLifecycle
import TestSupport
import Testing
import Wayland

#if canImport(Glibc)
import Glibc
#endif

/// The wlr window backend against a scripted compositor (`FakeCompositor`): what a real
/// sway does not do on demand.
@Suite(.serialized) struct WlrToplevelWatcherFailureTests {
    static let manager = (name: UInt32(2), interface: "zwlr_foreign_toplevel_manager_v1", version: UInt32(3))
    static let seat = (name: UInt32(1), interface: "wl_seat", version: UInt32(7))

    @Test func aCompositorWithoutTheManagerThrowsProtocolNotOffered() async throws {
        let compositor = try FakeCompositor(globals: [Self.seat])
        defer { compositor.stop() }
        let outcome = try await WlrWatcherRun.connectionError(display: compositor.path)
        #expect(outcome == .protocolNotOffered("zwlr_foreign_toplevel_manager_v1"))
        #expect(outcome?.description == "the compositor does not offer zwlr_foreign_toplevel_manager_v1")
        #expect(compositor.binds.all.isEmpty)
        // The connection was closed.
        #expect(await eventually { (try? await compositor.clientConnected()) == false })
    }

    @Test func theManagerIsBoundAtTheLowerVersionAndItsWindowsListed() async throws {
        let compositor = try FakeCompositor(
            globals: [Self.seat, (Self.manager.name, Self.manager.interface, 2)],
            windows: [.init(appID: "org.example.A", states: [0, 2]), .init(appID: "org.example.B", states: [1])])
        defer { compositor.stop() }
        let watch = try await WlrWatcherRun(display: compositor.path)
        defer { watch.stop() }
        let first = try #require(await watch.nextWindows())
        #expect(first.map(\.appID) == ["org.example.A", "org.example.B"])
        #expect(first.map(\.activated) == [true, false])
        #expect(first.map(\.id) == [1, 2])
        #expect(compositor.binds.all.map(\.interface) == ["zwlr_foreign_toplevel_manager_v1"])
        #expect(compositor.binds.all.map(\.version) == [2])
    }

    @Test func aThousandWindowsAreOneFirstList() async throws {
        let windows = (0..<1000).map { index in
            FakeCompositor.Window(appID: "org.example.App\(index)", states: index == 617 ? [2] : [])
        }
        let compositor = try FakeCompositor(globals: [Self.seat, Self.manager], windows: windows)
        defer { compositor.stop() }
        let watch = try await WlrWatcherRun(display: compositor.path)
        defer { watch.stop() }
        let first = try #require(await watch.nextWindows())
        #expect(first.count == 1000)
        #expect(first.compactMap(\.appID) == windows.map(\.appID))
        #expect(first.filter(\.activated).map(\.appID) == ["org.example.App617"])
        try await Task.sleep(for: .milliseconds(100))
        #expect(watch.updates.all.count == 1, "the first list is reported once, whole")

        // Stopping destroys every handle: a thousand `destroy` requests reach the compositor.
        try await watch.stopWatcher()
        #expect(await compositor.requests.wait { $0.filter { $0.opcode == 7 && $0.object >= 0xff00_0000 }.count == 1000 })
    }

    /// A watcher of one window (`org.example.A`) on a fake compositor that then does `fault`:
    /// the reasons the watcher reported the compositor lost (200 ms after the first), whether its
    /// last update is the loss, and whether it let go of everything. The compositor is left
    /// running for further checks; the caller stops it.
    private func lost(
        after fault: (FakeCompositor) async throws -> Void
    ) async throws -> (compositor: FakeCompositor, reasons: [String], lastIsLost: Bool, released: Bool) {
        let compositor = try FakeCompositor(
            globals: [Self.seat, Self.manager], windows: [.init(appID: "org.example.A", states: [2])])
        let watch = try await WlrWatcherRun(display: compositor.path)
        defer { watch.stop() }
        #expect(try #require(await watch.nextWindows()).map(\.appID) == ["org.example.A"])

        try await fault(compositor)
        #expect(await watch.updates.wait { $0.contains { $0.lostReason != nil } })
        try await Task.sleep(for: .milliseconds(200))
        let reasons = watch.updates.all.compactMap(\.lostReason)
        return (compositor, reasons, watch.updates.all.last?.lostReason != nil, await watch.isReleased())
    }

    @Test func aFinishedManagerIsReportedLostOnceAndItsHandlesDestroyed() async throws {
        let (compositor, reasons, lastIsLost, released) = try await lost { try await $0.finishManager() }
        defer { compositor.stop() }
        #expect(reasons == ["the compositor finished zwlr_foreign_toplevel_manager_v1"])
        #expect(lastIsLost)
        #expect(released)
        // The handle's `destroy` (opcode 7 on the compositor's first object id) went out first.
        #expect(await compositor.requests.wait { $0.contains(.init(object: 0xff00_0000, opcode: 7)) })
    }

    @Test func stopSendsEachHandlesDestroyAndTheManagersStop() async throws {
        let compositor = try FakeCompositor(
            globals: [Self.seat, Self.manager],
            windows: [.init(appID: "org.example.A", states: []), .init(appID: "org.example.B", states: [2])])
        defer { compositor.stop() }
        let watch = try await WlrWatcherRun(display: compositor.path)
        #expect(try #require(await watch.nextWindows()).count == 2)
        let managerID = try #require(compositor.binds.all.first?.id)
        try await watch.stopWatcher()
        let sent = await compositor.requests.wait { requests in
            requests.contains(.init(object: 0xff00_0000, opcode: 7)) && requests.contains(.init(object: 0xff00_0001, opcode: 7))
                && requests.contains(.init(object: managerID, opcode: 0))
        }
        #expect(sent, "\(compositor.requests.all)")
        #expect(await eventually { (try? await compositor.clientConnected()) == false })
        #expect(watch.updates.all.count == 1)
        watch.stop()
    }

    @Test func aProtocolErrorIsReportedLostWithTheInterfaceAndCode() async throws {
        let (compositor, reasons, _, released) = try await lost { try await $0.protocolError() }
        defer { compositor.stop() }
        #expect(reasons == ["the compositor reported protocol error 7 on zwlr_foreign_toplevel_manager_v1"])
        #expect(released)
    }

    @Test func garbageFromTheCompositorIsReportedLostOnce() async throws {
        let (compositor, reasons, _, released) = try await lost { try await $0.garbage() }
        defer { compositor.stop() }
        #expect(reasons.count == 1)
        #expect(released)
    }
}
