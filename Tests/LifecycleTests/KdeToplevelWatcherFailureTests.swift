import EpollLoop
import NotifyBusLifecycle
import TestSupport
import Testing
import Wayland

#if canImport(Glibc)
import Glibc
#endif

/// The kde window backend against a scripted compositor (`FakeCompositor`): what a real KWin
/// does not do on demand.
@Suite(.serialized) struct KdeToplevelWatcherFailureTests {
    static let manager = (name: UInt32(3), interface: "org_kde_plasma_window_management", version: UInt32(16))
    static let seat = (name: UInt32(1), interface: "wl_seat", version: UInt32(7))
    static let wlr = (name: UInt32(2), interface: "zwlr_foreign_toplevel_manager_v1", version: UInt32(3))
    /// KWin's state of an ordinary window: closeable, minimizable, maximizable, fullscreenable,
    /// movable, resizable, its desktop changeable (seen on KWin 5.27), and active or not.
    static let ordinary: UInt32 = 0x38f00

    @Test func aCompositorWithoutTheManagerThrowsProtocolNotOffered() async throws {
        let compositor = try FakeCompositor(globals: [Self.seat, Self.wlr])
        defer { compositor.stop() }
        let outcome = try await KdeWatcherRun.connectionError(display: compositor.path)
        #expect(outcome == .protocolNotOffered("org_kde_plasma_window_management"))
        #expect(compositor.binds.all.isEmpty)
        #expect(await eventually { (try? await compositor.clientConnected()) == false })
    }

    @Test func aManagerBelowVersion4IsNotOffered() async throws {
        let compositor = try FakeCompositor(globals: [Self.seat, (Self.manager.name, Self.manager.interface, 3)])
        defer { compositor.stop() }
        let outcome = try await KdeWatcherRun.connectionError(display: compositor.path)
        #expect(outcome == .protocolNotOffered("org_kde_plasma_window_management version 4 (it offers 3)"))
        #expect(compositor.binds.all.isEmpty)
    }

    @Test func theManagerIsBoundAtVersion4AndItsAppWindowsListedWithTheirProcesses() async throws {
        let compositor = try FakeCompositor(
            globals: [Self.seat, Self.manager],
            windows: [
                .init(appID: "org.example.A", flags: Self.ordinary | 1, pid: 4242),
                .init(appID: "org.kde.plasmashell", flags: 1 << 12 | 1 << 4, pid: 77),
                .init(appID: "org.example.B", flags: Self.ordinary, pid: 4343),
                .init(appID: "org.example.C", flags: Self.ordinary, pid: 0),
            ])
        defer { compositor.stop() }
        let watch = try await KdeWatcherRun(display: compositor.path)
        defer { watch.stop() }
        let first = try #require(await watch.nextWindows())
        // The panel (skip_taskbar) is not listed; a pid of 0 is no pid.
        #expect(first.map(\.appID) == ["org.example.A", "org.example.B", "org.example.C"])
        #expect(first.map(\.activated) == [true, false, false])
        #expect(first.map(\.pid) == [4242, 4343, nil])
        #expect(first.map(\.id) == [1, 3, 4])
        #expect(compositor.binds.all.map(\.interface) == ["org_kde_plasma_window_management"])
        #expect(compositor.binds.all.map(\.version) == [4])
        // Each announced window was asked for (get_window, opcode 1 on the manager).
        let managerID = try #require(compositor.binds.all.first?.id)
        #expect(compositor.requests.all.filter { $0 == .init(object: managerID, opcode: 1) }.count == 4)
    }

    @Test func aThousandWindowsAreOneFirstList() async throws {
        let windows = (0..<1000).map { index in
            FakeCompositor.Window(appID: "org.example.App\(index)", flags: Self.ordinary | (index == 617 ? 1 : 0), pid: UInt32(1000 + index))
        }
        let compositor = try FakeCompositor(globals: [Self.seat, Self.manager], windows: windows)
        defer { compositor.stop() }
        let watch = try await KdeWatcherRun(display: compositor.path)
        defer { watch.stop() }
        let first = try #require(await watch.nextWindows())
        #expect(first.count == 1000)
        #expect(first.compactMap(\.appID) == windows.map(\.appID))
        #expect(first.filter(\.activated).map(\.appID) == ["org.example.App617"])
        #expect(first.compactMap(\.pid) == (0..<1000).map { Int32(1000 + $0) })
        try await Task.sleep(for: .milliseconds(100))
        #expect(watch.updates.all.count == 1, "the first list is reported once, whole")

        // Stopping destroys every window: a thousand `destroy` requests (opcode 7) reach the
        // compositor.
        try await watch.stopWatcher()
        #expect(await compositor.requests.wait { $0.filter { $0.opcode == 7 }.count == 1000 })
        #expect(await eventually { (try? await compositor.clientConnected()) == false })
    }

    /// A watcher of one window on a fake compositor that then does `fault`: the reasons it
    /// reported the compositor lost (200 ms after the first), and whether it let go of everything.
    private func lost(after fault: (FakeCompositor) async throws -> Void) async throws -> (reasons: [String], released: Bool) {
        let compositor = try FakeCompositor(
            globals: [Self.seat, Self.manager], windows: [.init(appID: "org.example.A", flags: Self.ordinary | 1, pid: 42)])
        defer { compositor.stop() }
        let watch = try await KdeWatcherRun(display: compositor.path)
        defer { watch.stop() }
        #expect(try #require(await watch.nextWindows()).map(\.appID) == ["org.example.A"])
        try await fault(compositor)
        #expect(await watch.updates.wait { $0.contains { $0.lostReason != nil } })
        try await Task.sleep(for: .milliseconds(200))
        #expect(watch.updates.all.last?.lostReason != nil)
        return (watch.updates.all.compactMap(\.lostReason), await watch.isReleased())
    }

    @Test func aProtocolErrorIsReportedLostWithTheInterfaceAndCode() async throws {
        let (reasons, released) = try await lost { try await $0.protocolError() }
        #expect(reasons == ["the compositor reported protocol error 7 on org_kde_plasma_window_management"])
        #expect(released)
    }

    @Test func garbageFromTheCompositorIsReportedLostOnce() async throws {
        let (reasons, released) = try await lost { try await $0.garbage() }
        #expect(reasons.count == 1)
        #expect(released)
    }

    /// A socket that accepts connections into its backlog and never reads: the registry's round
    /// trip gives up after the watcher's bound, 1 s.
    @Test func aCompositorThatNeverAnswersTimesOutTheRegistryRoundTrip() async throws {
        let directory = try makeTemporaryDirectory("notifybus-kde-silent")
        defer { removeTree(directory) }
        let path = directory + "/wayland-silent"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        #expect(listen(listener, 4) == 0)
        let start = ContinuousClock.now
        let outcome = try await KdeWatcherRun.connectionError(display: path)
        let elapsed = start.duration(to: .now)
        #expect(outcome == .noAnswer(operation: "wl_display.sync", milliseconds: 1000))
        #expect(elapsed < .seconds(2), "returned after \(elapsed)")
    }
}
