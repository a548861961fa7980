import EpollLoop
@testable import NotifyBusLifecycle
import Synchronization
import TestSupport
import Testing
import Wayland

#if canImport(Glibc)
import Glibc
#endif

/// The wlr window backend against a real headless sway (wlroots' foreign-toplevel manager,
/// version 3) with real foot windows.
@Suite(.serialized) struct WlrToplevelWatcherTests {
    @Test func theFirstListHasEveryWindowAndTheFocusedOneActivated() async throws {
        let sway = try WlrSwayBed()
        defer { sway.stop() }
        try await sway.openWindow("org.example.A")
        try await sway.openWindow("org.example.B")
        try sway.command(#"[app_id="org.example.A"] focus"#)

        let watch = try await WatcherRun(display: sway.displayPath)
        defer { watch.stop() }
        let first = try #require(await watch.nextWindows())
        #expect(first.map(\.appID).sorted { ($0 ?? "") < ($1 ?? "") } == ["org.example.A", "org.example.B"])
        #expect(first.filter(\.activated).map(\.appID) == ["org.example.A"])
        #expect(first.allSatisfy { $0.pid == nil })
        #expect(Set(first.map(\.id)).count == 2)
        #expect(watch.updates.all.count == 1, "one report for the first list")
    }

    @Test func aFocusChangeArrivesWithin100Milliseconds() async throws {
        let sway = try WlrSwayBed()
        defer { sway.stop() }
        try await sway.openWindow("org.example.A")
        try await sway.openWindow("org.example.B")
        try sway.command(#"[app_id="org.example.A"] focus"#)

        let watch = try await WatcherRun(display: sway.displayPath)
        defer { watch.stop() }
        let first = try #require(await watch.nextWindows())
        #expect(first.first(where: \.activated)?.appID == "org.example.A")

        for (target, other) in [("org.example.B", "org.example.A"), ("org.example.A", "org.example.B")] {
            let sent = ContinuousClock.now
            try sway.command(#"[app_id="\#(target)"] focus"#)
            let arrived = await watch.updates.wait(timeout: .seconds(5)) { updates in
                updates.contains { $0.windows?.first(where: \.activated)?.appID == target && $0.at >= sent }
            }
            #expect(arrived, "\(target) activated")
            let update = try #require(watch.updates.all.first { $0.windows?.first(where: \.activated)?.appID == target && $0.at >= sent })
            let latency = sent.duration(to: update.at)
            #expect(latency <= .milliseconds(100), "focus reported after \(latency)")
            let windows = try #require(update.windows)
            #expect(windows.filter(\.activated).count == 1)
            #expect(windows.contains { $0.appID == other && !$0.activated })
        }
    }

    @Test func aWindowThatClosesLeavesTheList() async throws {
        let sway = try WlrSwayBed()
        defer { sway.stop() }
        try await sway.openWindow("org.example.A")
        try await sway.openWindow("org.example.B")

        let watch = try await WatcherRun(display: sway.displayPath)
        defer { watch.stop() }
        let first = try #require(await watch.nextWindows())
        #expect(first.count == 2)
        let idOfB = try #require(first.first { $0.appID == "org.example.B" }?.id)

        try sway.command(#"[app_id="org.example.B"] kill"#)
        let closed = await watch.updates.wait { updates in
            updates.last?.windows.map { $0.map(\.appID) == ["org.example.A"] } ?? false
        }
        #expect(closed)
        #expect(watch.updates.all.last?.windows?.contains { $0.id == idOfB } == false)
        #expect(await sway.windowExited("org.example.B"))

        // A window opened now is announced, with a new id.
        try await sway.openWindow("org.example.C")
        let opened = await watch.updates.wait { updates in
            updates.last?.windows?.contains { $0.appID == "org.example.C" } ?? false
        }
        #expect(opened)
        let idOfC = watch.updates.all.last?.windows?.first { $0.appID == "org.example.C" }?.id
        #expect(idOfC.map { !first.map(\.id).contains($0) } == true)
    }

    @Test func aCompositorThatDiesIsReportedLostExactlyOnce() async throws {
        let sway = try WlrSwayBed()
        defer { sway.stop() }
        try await sway.openWindow("org.example.A")

        let watch = try await WatcherRun(display: sway.displayPath)
        defer { watch.stop() }
        #expect(try #require(await watch.nextWindows()).count == 1)

        sway.killCompositor()
        let lost = await watch.updates.wait { $0.contains { $0.lostReason != nil } }
        #expect(lost)
        // Nothing after it, however long the loop runs.
        try await Task.sleep(for: .milliseconds(300))
        let all = watch.updates.all
        #expect(all.filter { $0.lostReason != nil }.count == 1)
        #expect(all.last?.lostReason != nil)
        #expect(await watch.isReleased())
    }

    @Test func nothingIsReportedAfterStop() async throws {
        let sway = try WlrSwayBed()
        defer { sway.stop() }
        try await sway.openWindow("org.example.A")

        let watch = try await WatcherRun(display: sway.displayPath)
        #expect(try #require(await watch.nextWindows()).count == 1)
        watch.stop()
        let count = watch.updates.all.count
        try await sway.openWindow("org.example.B")
        sway.killCompositor()
        try await Task.sleep(for: .milliseconds(300))
        #expect(watch.updates.all.count == count)
    }

    @Test func aWindowMovedToTheScratchpadIsNoLongerActivated() async throws {
        let sway = try WlrSwayBed()
        defer { sway.stop() }
        try await sway.openWindow("org.example.A")
        try await sway.openWindow("org.example.B")
        try sway.command(#"[app_id="org.example.A"] focus"#)

        let watch = try await WatcherRun(display: sway.displayPath)
        defer { watch.stop() }
        #expect(try #require(await watch.nextWindows()).first(where: \.activated)?.appID == "org.example.A")

        try sway.command(#"[app_id="org.example.A"] move scratchpad"#)
        let hidden = await watch.updates.wait { updates in
            guard let windows = updates.last?.windows else { return false }
            return windows.contains { $0.appID == "org.example.A" && !$0.activated }
        }
        #expect(hidden, "\(watch.updates.all.map(\.update))")
        #expect(watch.updates.all.last?.windows?.filter { $0.appID == "org.example.A" && $0.activated }.isEmpty == true)
    }

    @Test func anIdleWatcherLeavesItsLoopAsleep() async throws {
        let sway = try WlrSwayBed()
        defer { sway.stop() }
        try await sway.openWindow("org.example.A")
        let watch = try await WatcherRun(display: sway.displayPath)
        defer { watch.stop() }
        #expect(try #require(await watch.nextWindows()).count == 1)

        let thread = try #require(threadID(named: watch.loop.name))
        try await Task.sleep(for: .milliseconds(100))
        let before = try #require(contextSwitches(ofThread: thread))
        try await Task.sleep(for: .milliseconds(700))
        let after = try #require(contextSwitches(ofThread: thread))
        #expect(after == before, "the loop thread woke \(after - before) times while nothing happened")
    }

    @Test func aCompositorThatDoesNotAnswerTimesOutTheRoundTrip() async throws {
        let sway = try WlrSwayBed()
        defer { sway.stop() }
        let loop = try EventLoopThread(name: "wlr-stopped")
        defer { loop.syncShutdown() }
        let display = sway.displayPath
        kill(sway.pid, SIGSTOP)
        let start = ContinuousClock.now
        let outcome = try await loop.submit { _ -> WaylandError? in
            do throws(WaylandError) {
                let connection = try WaylandDisplay(name: display)
                defer { connection.close() }
                try connection.roundtrip(timeout: .milliseconds(300))
                return nil
            } catch {
                return error
            }
        }
        let elapsed = start.duration(to: .now)
        kill(sway.pid, SIGCONT)
        #expect(outcome == .noAnswer(operation: "wl_display.sync", milliseconds: 300))
        #expect(elapsed < .seconds(2), "returned after \(elapsed)")

        // Running again, it answers the next connection.
        let watch = try await WatcherRun(display: display)
        defer { watch.stop() }
        #expect(try #require(await watch.nextWindows()).isEmpty)
    }

    @Test func noCompositorSocketThrowsNoCompositor() async throws {
        let directory = try makeTemporaryDirectory("notifybus-wlr-none")
        defer { removeTree(directory) }
        let display = directory + "/wayland-9"
        let loop = try EventLoopThread(name: "wlr-none")
        defer { loop.syncShutdown() }
        let outcome = try await loop.submit { context -> WaylandError? in
            do throws(WaylandError) {
                _ = try WlrToplevelWatcher(context: context, display: display) { _ in }
                return nil
            } catch {
                return error
            }
        }
        guard case .noCompositor(let name, _) = outcome else {
            Issue.record("expected .noCompositor, got \(String(describing: outcome))")
            return
        }
        #expect(name == display)
    }

    @Test func theCompositorPIDIsSways() async throws {
        let sway = try WlrSwayBed()
        defer { sway.stop() }
        let watch = try await WatcherRun(display: sway.displayPath)
        defer { watch.stop() }
        #expect(watch.compositorPID == sway.pid)
        #expect(try #require(await watch.nextWindows()).isEmpty)
    }
}

/// The id of this process's only thread named `name` (/proc/self/task/TID/comm).
private func threadID(named name: String) -> Int32? {
    guard let directory = opendir("/proc/self/task") else { return nil }
    defer { closedir(directory) }
    var found: [Int32] = []
    while let entry = readdir(directory) {
        let tid = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            Int32(String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self))
        }
        guard let tid, let comm = readFile("/proc/self/task/\(tid)/comm") else { continue }
        if comm.split(separator: "\n").first.map(String.init) == name { found.append(tid) }
    }
    return found.count == 1 ? found[0] : nil
}

/// The voluntary and involuntary context switches of a thread of this process, from
/// /proc/self/task/TID/status.
private func contextSwitches(ofThread thread: Int32) -> Int? {
    guard let status = readFile("/proc/self/task/\(thread)/status") else { return nil }
    var total = 0
    for line in status.split(separator: "\n") where line.contains("ctxt_switches:") {
        total += Int(line.split(separator: ":").last?.trimmingPrefix(while: { $0 == " " || $0 == "\t" }) ?? "") ?? 0
    }
    return total
}

// MARK: A watcher on its own loop

/// An update as the test saw it, with when it arrived.
private struct Stamped: Sendable {
    var at: ContinuousClock.Instant
    var update: ToplevelUpdate

    var windows: [ToplevelWindow]? {
        if case .windows(let windows) = update { windows } else { nil }
    }
    var lostReason: String? {
        if case .lost(let reason) = update { reason } else { nil }
    }
}

/// A `WlrToplevelWatcher` on an `EventLoopThread` of its own, its updates recorded.
private final class WatcherRun: Sendable {
    let loop: EventLoopThread
    let updates = Recorder<Stamped>()
    let compositorPID: Int32?
    private static let serial = Atomic(0)
    private let key = LoopLocalKey<WlrToplevelWatcher>()
    private let consumed = Mutex(0)

    init(display: String) async throws {
        loop = try EventLoopThread(name: "wlr-watch-\(WatcherRun.serial.add(1, ordering: .relaxed).newValue)")
        let updates = updates
        let key = key
        let outcome = try await loop.submit { context -> Result<Int32?, WaylandError> in
            do throws(WaylandError) {
                let watcher = try WlrToplevelWatcher(context: context, display: display) { update in
                    updates.append(Stamped(at: .now, update: update))
                }
                context[local: key] = watcher
                return .success(watcher.compositorPID)
            } catch {
                return .failure(error)
            }
        }
        compositorPID = try outcome.get()
    }

    /// The next `.windows` update not yet taken.
    func nextWindows(timeout: Duration = .seconds(10)) async -> [ToplevelWindow]? {
        let start = consumed.withLock { $0 }
        guard await updates.wait(timeout: timeout, until: { $0.count > start }) else { return nil }
        consumed.withLock { $0 = start + 1 }
        return updates.all[start].windows
    }

    /// Whether the watcher let go of its connection (disconnected, proxies destroyed).
    func isReleased() async -> Bool {
        let key = key
        return (try? await loop.submit { context in
            guard let watcher = context[local: key] else { return false }
            return !watcher.isConnected
        }) ?? false
    }

    func stop() {
        let key = key
        try? loop.execute { context in
            context[local: key]?.stop()
            context[local: key] = nil
        }
        loop.syncShutdown()
    }
}

// MARK: A private headless sway

/// A headless sway of this test file's own (sway refuses to run as root: it runs as `nobody`
/// with a runtime directory of its own) and foot windows on it; everything it started is killed
/// and reaped, and its directory removed, by `stop()`.
private final class WlrSwayBed {
    let directory: String
    let compositor: Spawned
    let ipcSocket: String
    private var windows: [String: Spawned] = [:]
    private let log: String
    private let uid: uid_t
    private let gid: gid_t

    var pid: Int32 { compositor.pid }
    /// The Wayland socket, absolute.
    var displayPath: String { directory + "/wayland-1" }

    init() throws {
        guard let account = getpwnam("nobody") else { throw HarnessError("no user nobody") }
        uid = account.pointee.pw_uid
        gid = account.pointee.pw_gid
        directory = try makeTemporaryDirectory("notifybus-wlr-sway")
        log = directory + ".log"
        do {
            chmod(directory, 0o700)
            guard chown(directory, uid, gid) == 0 else { throw HarnessError("chown \(directory): errno \(errno)") }
            let configuration = directory + "/sway.conf"
            try writeFile(configuration, "output HEADLESS-1 resolution 800x600\n")
            compositor = try Spawned(
                "/usr/bin/setpriv",
                [
                    "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "env", "XDG_RUNTIME_DIR=\(directory)",
                    "WLR_BACKENDS=headless", "WLR_RENDERER=pixman", "WLR_LIBINPUT_NO_DEVICES=1",
                    "WLR_HEADLESS_OUTPUTS=1", "sway", "-c", configuration,
                ],
                environment: environment(with: ["WAYLAND_DISPLAY": nil, "DISPLAY": nil, "SWAYSOCK": nil]), log: log)
        } catch {
            removeTree(directory)
            unlink(log)
            throw error
        }
        ipcSocket = "\(directory)/sway-ipc.\(uid).\(compositor.pid).sock"
        let deadline = ContinuousClock.now + .seconds(20)
        while access(ipcSocket, F_OK) != 0 || access(displayPath, F_OK) != 0 {
            guard ContinuousClock.now < deadline, !compositor.hasExited else {
                stop()
                throw HarnessError("sway did not start; see \(log)")
            }
            usleep(10_000)
        }
    }

    deinit { stop() }

    /// Opens a foot window with `appID` and waits until sway lists it.
    func openWindow(_ appID: String) async throws {
        windows[appID] = try Spawned(
            "/usr/bin/setpriv",
            [
                "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "env", "XDG_RUNTIME_DIR=\(directory)",
                "WAYLAND_DISPLAY=wayland-1", "foot", "--app-id=\(appID)", "--", "sleep", "600",
            ],
            environment: environment(with: ["WAYLAND_DISPLAY": nil, "DISPLAY": nil]), log: log)
        let shown = await eventually(timeout: .seconds(20)) {
            ((try? self.message(type: 4, "")) ?? "").filter { $0 != " " }.contains(#""app_id":"\#(appID)""#)
        }
        guard shown else { throw HarnessError("no window \(appID) in sway; see \(log)") }
    }

    /// Whether the foot of `appID` has exited (it was reaped), within 10 seconds.
    func windowExited(_ appID: String) async -> Bool {
        guard let window = windows[appID] else { return false }
        return await window.exit(within: .seconds(10)) != nil
    }

    /// Runs a sway command (IPC `RUN_COMMAND`); throws when sway says it failed.
    func command(_ text: String) throws {
        let reply = try message(type: 0, text)
        guard reply.contains(#""success": true"#) || reply.contains(#""success":true"#) else {
            throw HarnessError("sway refused \(text): \(reply)")
        }
    }

    /// One message on sway's IPC socket (i3's framing: "i3-ipc", payload length and type as
    /// 32-bit native integers, the payload) and its reply's payload.
    func message(type: UInt32, _ payload: String) throws -> String {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: errno \(errno)") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in ipcSocket.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { throw HarnessError("connect \(ipcSocket): errno \(errno)") }
        var bytes = Array("i3-ipc".utf8)
        withUnsafeBytes(of: UInt32(payload.utf8.count)) { bytes += $0 }
        withUnsafeBytes(of: type) { bytes += $0 }
        bytes += payload.utf8
        guard write(fd, bytes, bytes.count) == bytes.count else { throw HarnessError("write to sway: errno \(errno)") }
        let header = try readExactly(fd, 14)
        let length = header[6..<10].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
        return String(decoding: try readExactly(fd, Int(length)), as: UTF8.self)
    }

    private func readExactly(_ fd: Int32, _ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + done, count - done) }
            guard n > 0 else { throw HarnessError("read from sway: errno \(errno)") }
            done += n
        }
        return bytes
    }

    /// Kills sway (SIGKILL) and reaps it; its windows exit on their own.
    func killCompositor() {
        compositor.terminate(signal: SIGKILL)
    }

    /// Ends every window and sway, reaps them, and removes the directory and the log.
    func stop() {
        for window in windows.values { window.terminate() }
        windows = [:]
        compositor.terminate()
        removeTree(directory)
        unlink(log)
    }
}
