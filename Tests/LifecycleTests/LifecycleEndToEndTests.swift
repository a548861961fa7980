import DBus
import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The portal stand-in of DBusSourcesTests (Fixtures/portal.py under python-dbusmock).
private let portalTemplate: String = {
    let file = "\(#filePath)"
    let tests = String(file[..<(file.lastIndex(of: "/") ?? file.endIndex)].dropLast("/LifecycleTests".count))
    return tests + "/DBusSourcesTests/Fixtures/portal.py"
}()

private let portalPath: ObjectPath = "/org/freedesktop/portal/desktop"
private let namespace = "org.notifybus.lifecycle"

/// Python run by the portal stand-in for `Burst(u start, u count, u keys)`: `SettingChanged` of
/// `k<i mod keys>` to `i` for each `i` from `start`, in order, before the call's reply.
private let burstCode = """
    import dbus
    import dbus.lowlevel
    start, count, keys = int(args[0]), int(args[1]), int(args[2])
    for i in range(start, start + count):
        message = dbus.lowlevel.SignalMessage('\(portalPath)', 'org.freedesktop.portal.Settings', 'SettingChanged')
        message.append('\(namespace)', 'k%d' % (i % keys), dbus.Int32(i, variant_level=1), signature='ssv')
        for location in self.locations:
            location[0].send_message(message)
    """

extension LifecycleRuleTests {
    /// The whole point: an app's subscriber, in the app's scope, does not run while the app is
    /// frozen in the background, whatever changes meanwhile, and on return gets one flush with
    /// one notification per key.
    @Test func aFrozenAppsSubscriberSleepsThroughAThousandEventsAndGetsOneFlushOnReturn() async throws {
        let bed = try await LifecycleBed()
        defer { bed.stop() }
        try await bed.open("org.example.B")
        let (_, scopeA) = try await bed.open("org.example.A")
        try await bed.start(["--freeze-delay", "2", "--source", "settings"])
        let daemon = try #require(bed.daemon)
        let log = WatcherLog(bed)
        #expect(log.waitFor("org.example.A", "foreground", fromStart: true))

        // The portal, with a method that sends a burst of SettingChanged signals.
        let portal = try await MockService(bus: daemon.session, template: portalTemplate, name: "org.freedesktop.portal.Desktop")
        defer { portal.process.terminate() }
        let control = try DBusClient(address: daemon.session.dbusAddress)
        defer { Task { await control.close() } }
        try await control.waitUntilConnected()
        _ = try await control.call(
            destination: "org.freedesktop.portal.Desktop", path: portalPath, interface: "org.freedesktop.DBus.Mock",
            member: "AddMethod",
            arguments: [.string("org.notifybus.LifecycleFlood"), .string("Burst"), .string("uuu"), .string(""), .string(burstCode)])
        // A witness outside the app: it sees the settings source running, and the last event.
        let witness = try daemon.notifywatch(["settings/\(namespace)/*"])
        defer { kill(witness.pid, SIGTERM); witness.waitForExit(timeout: .seconds(5)) }
        #expect(daemon.lines(of: witness, until: { line in
            line["type"]?.stringValue == "source" && line["source"]?.stringValue == "settings" && line["status"]?.stringValue == "running"
        }) != nil)

        // The app's subscriber, in its scope: 10 keys and the app's own lifecycle key.
        let keys = (0..<10).map { "settings/\(namespace)/k\($0)" }
        let lifecycleKey = "app/org.example.A/lifecycle"
        let (client, subscription) = try daemon.pythonClient(keys + [lifecycleKey], in: scopeA.directory)
        defer { kill(client.pid, SIGTERM); client.waitForExit(timeout: .seconds(5)) }
        // The Events signals the daemon sends it, as dbus-monitor sees them.
        let monitor = try EventsMonitor(bus: daemon.session, path: subscription)
        defer { monitor.stop() }
        #expect(await monitor.ready())

        // To the background: the subscriber hears it, then is frozen with the app.
        try await bed.sway.focus(appID: "org.example.B")
        let background = daemon.nextLine(of: client)
        #expect(background?["key"]?.stringValue == lifecycleKey && background?["value"]?["state"] == "background", "\(String(describing: background))")
        #expect(log.waitFor("org.example.A", "frozen"))
        #expect(scopeA.isFrozen)
        let cpuAtFreeze = try #require(cpuTime(of: client.pid))
        let switchesAtFreeze = try #require(contextSwitches(of: client.pid))

        // 1,000 events on the 10 keys while it is frozen: k<i mod 10> = i.
        _ = try await control.call(
            destination: "org.freedesktop.portal.Desktop", path: portalPath, interface: "org.notifybus.LifecycleFlood",
            member: "Burst", arguments: [.uint32(0), .uint32(1000), .uint32(10)], timeout: .seconds(60))
        #expect(daemon.lines(of: witness, until: { isNotification($0, "settings/\(namespace)/k9", 999) }, timeout: .seconds(30)) != nil)
        // Nothing printed, no CPU time taken, while frozen.
        #expect(client.readLine(timeout: .milliseconds(300)) == nil)
        #expect(cpuTime(of: client.pid) == cpuAtFreeze)
        #expect(contextSwitches(of: client.pid) == switchesAtFreeze)
        #expect(scopeA.isFrozen)
        let signalsBefore = monitor.signals

        // Back in front: one resume with one notification per key, each the latest value.
        try await bed.sway.focus(appID: "org.example.A")
        var flushed = 0
        let lines = daemon.lines(of: client, until: { line in
            if line["type"]?.stringValue == "notification" { flushed += 1 }
            return flushed == keys.count + 1
        }, timeout: .seconds(10)) ?? []
        #expect(lines.map { $0["type"]?.stringValue ?? "?" } == ["suspended", "resumed"] + Array(repeating: "notification", count: keys.count + 1), "\(lines)")
        #expect(lines.count > 1 && lines[1]["flushed"] == JSONValue.integer(Int64(keys.count + 1)), "\(lines.prefix(2))")
        let notifications = lines.filter { $0["type"]?.stringValue == "notification" }
        #expect(Set(notifications.compactMap { $0["key"]?.stringValue }) == Set(keys + [lifecycleKey]))
        for (index, key) in keys.enumerated() {
            let line = notifications.first { $0["key"]?.stringValue == key }
            #expect(line?["value"] == JSONValue.integer(Int64(990 + index)), "\(key): \(String(describing: line))")
            #expect(line?["coalesced"] == 100, "\(key): \(String(describing: line))")
            #expect(line?["kind"] == "flushed", "\(key): \(String(describing: line))")
        }
        // Its own key once: frozen, then foreground (published before the thaw), collapsed.
        let own = notifications.first { $0["key"]?.stringValue == lifecycleKey }
        #expect(own?["value"] == ["state": "foreground", "reason": nil], "\(String(describing: own))")
        #expect(own?["coalesced"] == 2, "\(String(describing: own))")

        // Live again: the next change is the next line, alone.
        _ = try await control.call(
            destination: "org.freedesktop.portal.Desktop", path: portalPath, interface: "org.notifybus.LifecycleFlood",
            member: "Burst", arguments: [.uint32(1000), .uint32(1), .uint32(10)])
        let live = daemon.nextLine(of: client, timeout: .seconds(10))
        #expect(live?["key"]?.stringValue == keys[0] && live?["value"] == 1000 && live?["coalesced"] == 1, "\(String(describing: live))")
        // The resume and its flush came in one Events signal, the live change in the next.
        #expect(await eventually(timeout: .seconds(5)) { monitor.signals >= signalsBefore + 2 })
        #expect(monitor.signals == signalsBefore + 2, "\(monitor.output)")
        #expect(log.waitFor("org.example.A", "foreground"))
    }
}

/// The CPU time (user and system, in clock ticks) that process `pid` has taken: fields 14 and 15
/// of `/proc/PID/stat`.
func cpuTime(of pid: Int32) -> Int? {
    guard let stat = readFile("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return nil }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    // fields[0] is field 3 (the state): field N is fields[N - 3].
    guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
    return user + system
}

/// How many times the threads of process `pid` were switched out (voluntarily or not), summed
/// over `/proc/PID/task/*/status`: a thread that ran at all adds one.
func contextSwitches(of pid: Int32) -> Int? {
    guard let directory = opendir("/proc/\(pid)/task") else { return nil }
    defer { closedir(directory) }
    var total = 0
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard Int(name) != nil, let status = readFile("/proc/\(pid)/task/\(name)/status") else { continue }
        for line in status.split(separator: "\n") where line.contains("ctxt_switches:") {
            total += Int(line.split(separator: "\t").last.map(String.init) ?? "") ?? 0
        }
    }
    return total
}

/// `dbus-monitor` on a private bus, for the `Events` signals sent to one subscription.
final class EventsMonitor {
    let log: String
    let path: String
    private let process: ChildProcess

    init(bus: PrivateBus, path: String) throws {
        self.path = path
        log = try makeTemporaryFile("events-monitor")
        process = try ChildProcess(
            "/usr/bin/dbus-monitor",
            ["--address", bus.address, "type='signal',interface='org.notifybus.Subscription1',member='Events',path='\(path)'"],
            environment: ["PATH": "/usr/bin:/bin"], log: log)
    }

    /// Waits until it monitors: it says so with the `NameLost` of its own name.
    func ready() async -> Bool {
        await eventually { output.contains("member=NameLost") }
    }

    var output: String { readFile(log) ?? "" }

    /// The `Events` signals to the subscription seen so far.
    var signals: Int {
        output.split(separator: "\n").filter { $0.hasPrefix("signal ") && $0.contains("member=Events") && $0.contains("path=\(path);") }.count
    }

    func stop() {
        process.terminate()
        unlink(log)
    }
}
