import BenchSupport
import Harness

/// 5. Woken by a message: a frozen app's D-Bus service called, and sent a unicast signal.
extension LifecycleRun {
    /// The app id of the woken app, and its service's name.
    static let wakeApp = "org.bench.Wake"

    struct WakeResult {
        /// `Ping` sent → its reply, while the app was frozen by the daemon.
        var frozenCall = Samples()
        /// The same call to the same app running (within its wake grace, just after).
        var runningCall = Samples()
        /// A unicast signal sent to the frozen app → its scope's `cgroup.events` reads `frozen 0`.
        var messageThaw = Samples()
        var elapsed: Int64 = 0

        func write() throws {
            var report = ReportPart("lifecycle-5-wake")
            report.line("5. Woken by a message: `Ping` to the D-Bus service of an app frozen by notifybusd (`--freeze-wake-grace 1`) → its reply, "
                + "against the same call to the same app running just after; a unicast signal to it → its scope's `cgroup.events` reads "
                + "`frozen 0`; \(frozenCall.count) rounds (\(Figure.decimal(Double(elapsed) / 1e9, places: 0)) s)")
            report.line()
            report.samplesHeader("what")
            report.row("call to the frozen app → reply", frozenCall) { Figure.microseconds($0) }
            report.row("the same call, the app running (anchor)", runningCall) { Figure.microseconds($0) }
            report.row("unicast signal to the frozen app → `frozen 0`", messageThaw) { Figure.microseconds($0) }
            report.line()
            let margin: Int64 = 15_000_000
            let callMet = frozenCall.p50 <= runningCall.p50 + margin && frozenCall.p99 <= runningCall.p99 + margin
            report.line("Frozen − running: p50 +\(Figure.milliseconds(frozenCall.p50 - runningCall.p50)), p99 "
                + "+\(Figure.milliseconds(frozenCall.p99 - runningCall.p99)) (goal ≤ +15 ms at both): \(Figure.verdict(callMet)). "
                + "Message → `frozen 0` p99 \(Figure.milliseconds(messageThaw.p99)) (goal ≤ 100 ms): \(Figure.verdict(messageThaw.p99 <= 100_000_000)).")
            try report.finish()
        }
    }

    /// `wakeRounds` rounds on `app` (a foot window, and the responder in its scope), each of two
    /// freezes by the daemon (`--freeze-wake-grace 1`): a call while frozen, then the same call
    /// at once (it runs); after it was frozen again, a unicast signal → `frozen 0`.
    func measureWake(_ app: App, caller: RawConnection, service: String) throws -> WakeResult {
        guard let bus else { return WakeResult() }
        Self.progress("woken by a message: \(wakeRounds) rounds of a call to the frozen app, the same call running, a signal → thawed")
        let watch = try EventsWatch()
        try watch.watch(app.scope.eventsFile)
        let unique = try caller.callBus("GetNameOwner", [.string(service)]).first?.stringValue ?? service
        var result = WakeResult()
        let started = monotonicNanoseconds()
        func ping() throws -> Int64 {
            let sent = monotonicNanoseconds()
            _ = try caller.call(destination: service, path: "/", interface: Responder.interface, member: "Ping", timeoutMilliseconds: 10_000)
            return monotonicNanoseconds() - sent
        }
        for _ in 0..<wakeRounds {
            try bus.waitUntilFrozenByDaemon(app)
            result.frozenCall.append(try ping())
            result.runningCall.append(try ping())
            try bus.waitUntilFrozenByDaemon(app)
            watch.drain()
            let sent = monotonicNanoseconds()
            caller.send(Message.unicastSignal(path: "/", interface: Responder.interface, member: "Poke", destination: unique, []))
            caller.flush()
            guard let thawed = watch.wait(for: "frozen 0", in: app.scope.eventsFile) else {
                throw HarnessError("a signal to the frozen \(app.appID) did not thaw it within 5 s\n\(bus.daemonLog.suffix(3000))")
            }
            result.messageThaw.append(thawed - sent)
        }
        result.elapsed = monotonicNanoseconds() - started
        return result
    }
}
