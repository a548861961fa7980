import BenchDBus
import ChildProcess

#if canImport(Glibc)
import Glibc
#endif

/// 5. Woken by a message: a frozen app's D-Bus service called, and sent a unicast signal.
extension LifecycleRun {
    /// The app id of the woken app, and its service's name.
    static let wakeApp = "org.bench.Wake"

    struct WakeResult {
        /// `Ping` sent → its reply, while the app was frozen by the daemon.
        var frozenCall: [Int64] = []
        /// The same call to the same app running (within its wake grace, just after).
        var runningCall: [Int64] = []
        /// A unicast signal sent to the frozen app → its scope's `cgroup.events` reads `frozen 0`.
        var messageThaw: [Int64] = []
        var elapsed: Int64 = 0
    }

    /// `wakeRounds` rounds on `app` (a foot window, and the responder in its scope), each of two
    /// freezes by the daemon (`--freeze-wake-grace 1`): a call while frozen, then the same call
    /// at once (it runs); after it was frozen again, a unicast signal → `frozen 0`.
    func measureWake(_ app: Sway.Window, caller: RawConnection, service: String) throws(BenchError) -> WakeResult {
        guard let bus else { return WakeResult() }
        Self.progress("woken by a message: \(wakeRounds) rounds of a call to the frozen app, the same call running, a signal → thawed")
        let watch = try EventsWatch()
        try watch.watch(app.scope.events)
        let unique = try caller.callBus("GetNameOwner", [.string(service)]).first?.stringValue ?? service
        var result = WakeResult()
        let started = monotonicNanoseconds()
        func frozenAgain() throws(BenchError) {
            var waited = 0
            while !(app.scope.isFrozen && app.scope.freezeBit), waited < 15_000 {
                bus.portal.serve()
                usleep(5_000)
                waited += 5
            }
            guard waited < 15_000 else { throw BenchError("notifybusd did not freeze \(app.appID) again within 15 s\n\(bus.daemonLog.suffix(3000))") }
            try waitForState(app.appID, "frozen")
            usleep(100_000)
        }
        func ping() throws(BenchError) -> Int64 {
            let sent = monotonicNanoseconds()
            _ = try caller.call(destination: service, path: "/", interface: Responder.interface, member: "Ping", timeoutMilliseconds: 10_000)
            return monotonicNanoseconds() - sent
        }
        for _ in 0..<wakeRounds {
            try frozenAgain()
            result.frozenCall.append(try ping())
            result.runningCall.append(try ping())
            try frozenAgain()
            watch.drain()
            let sent = monotonicNanoseconds()
            caller.send(Message.unicastSignal(path: "/", interface: Responder.interface, member: "Poke", destination: unique, []))
            caller.flush()
            guard let thawed = watch.wait(for: "frozen 0", in: app.scope.events) else {
                throw BenchError("a signal to the frozen \(app.appID) did not thaw it within 5 s\n\(bus.daemonLog.suffix(3000))")
            }
            result.messageThaw.append(thawed - sent)
        }
        result.elapsed = monotonicNanoseconds() - started
        return result
    }
}
