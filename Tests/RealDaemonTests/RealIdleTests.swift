import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// An idle `notifywatch`, an idle `notifybusd` and an idle `notifywatch --daemon` beside the real
/// peers, nothing changing: every source but power (`--no-source power`), the real
/// iio-sensor-proxy (umockdev) and the real systemd-localed on a private system bus, the real
/// xdg-desktop-portal with dconf on a private session bus, where notifybusd serves the
/// subscriber. Every thread of the three programs is counted once a second over 60 s after 4 s
/// of settling (`ThreadWakeups`), the one 64 s idle window of the suite.
///
/// localed exits about 30 s after its last call, within the window (its activation is
/// installed, as on a system). The programs do not ask to be told when localed's name goes away
/// (its next owner they follow): not one thread of any of them wakes in the window, and nothing
/// starts localed again (its name has no owner at the window's end).
@Suite("idle beside the real daemons", .enabled(if: canRunRealLocaled, "needs root for unshare --mount; always run under CI"))
struct RealIdleTests {
    @Test func notifywatchAndNotifybusdDoNotWakeIn60Seconds() async throws {
        let peers = try await RealPeers(activatingLocaled: true)
        let (system, testbed, localed, portal, buses) = (peers.system, peers.sensors, peers.localed, peers.portal, peers.buses)

        let origin = ContinuousClock.now
        let watch = try NotifyWatchRun(["--no-source", "power"] + buses)
        let daemonLog = portal.bus.directory + "/notifybusd.log"
        let daemon = try ChildProcess(
            Paths.notifybusd, ["--no-source", "power"] + buses,
            environment: ChildProcess.environment(with: ["DBUS_SYSTEM_BUS_ADDRESS": nil, "DBUS_SESSION_BUS_ADDRESS": nil, "LD_PRELOAD": nil]),
            log: daemonLog)
        defer { daemon.terminate() }
        _ = try await portal.bus.waitForOwner(of: "org.notifybus.Bus1") {
            daemon.hasExited ? "notifybusd exited: \(readFile(daemonLog) ?? "")" : nil
        }
        let subscriberLog = portal.bus.directory + "/subscriber.log"
        let subscriber = try ChildProcess(
            executable: NotifyWatchRun.executable,
            arguments: ["--daemon", "--json", "--session-bus", portal.bus.address, "orientation", "locale", "settings/**"],
            environment: ChildProcess.environment(with: ["DBUS_SESSION_BUS_ADDRESS": nil, "NO_COLOR": nil]),
            standardError: .append(subscriberLog))
        defer { subscriber.terminate() }
        // Started: the sources' lines and the current values, directly and through the daemon.
        #expect(await watch.read(until: { $0["key"] == "orientation" }).last?["value"] == "portrait")
        #expect(await eventually(timeout: realPatience) {
            subscriber.readLine(timeout: .milliseconds(1))?.contains(#""key":"orientation""#) == true
        }, "\(readFile(subscriberLog) ?? "")")

        async let watchWakes = ThreadWakeups.record(pid: watch.pid, origin: origin)
        async let daemonWakes = ThreadWakeups.record(pid: daemon.pid, origin: origin)
        async let subscriberWakes = ThreadWakeups.record(pid: subscriber.pid, origin: origin)
        try await system.waitForNoOwner(of: RealLocaled.name, timeout: .seconds(64))
        let localedLeft = Int((ContinuousClock.now - origin).components.seconds)
        let (watched, served, subscribed) = await (watchWakes, daemonWakes, subscriberWakes)

        #expect(localedLeft < 64, "localed did not exit within the window")
        #expect(watched.alive && watched.total == 0, "notifywatch: \(watched); localed left at \(localedLeft) s")
        #expect(served.alive && served.total == 0, "notifybusd: \(served); localed left at \(localedLeft) s")
        #expect(subscribed.alive && subscribed.total == 0, "notifywatch --daemon: \(subscribed)")
        #expect(await localed.owner() == nil, "localed was started again")

        #expect(await watch.stop(with: SIGTERM) == 0)
        #expect(watch.standardError == "")
        #expect(subscriber.terminate().flatMap(ChildProcess.exitStatus(ofWaitStatus:)) == 0)
        #expect(daemon.terminate().flatMap(ChildProcess.exitStatus(ofWaitStatus:)) == 0)
        try testbed.stop()
    }
}
