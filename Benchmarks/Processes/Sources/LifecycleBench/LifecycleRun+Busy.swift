import BenchSupport
import Harness

#if canImport(Glibc)
import Glibc
#endif

/// 3. A busy app in the background, frozen, against the same app running.
extension LifecycleRun {
    struct BusyResult {
        var frozen: (cpuMilliseconds: Int64, voluntary: Int64, involuntary: Int64) = (0, 0, 0)
        var running: (cpuMilliseconds: Int64, voluntary: Int64, involuntary: Int64) = (0, 0, 0)
        var frozenProcesses = 0
        var runningProcesses = 0
        var stayedFrozen = false
        var events = 0
        var seconds: Double = 0

        func write() throws {
            var report = ReportPart("lifecycle-3-busy")
            report.line("3. A busy app (foot printing the date every 50 ms, and a subscriber in the same scope of a key changed 10 times a second): "
                + "\(Figure.decimal(seconds, places: 1)) s, both apps over the same window, \(events) changes sent")
            report.line()
            report.header(["the app", "CPU time (ms)", "wake-ups: voluntary + involuntary context switches", "voluntary", "involuntary", "processes at the end"])
            for (name, usage, processes) in [("in the background, frozen by notifybusd", frozen, frozenProcesses),
                                             ("focused, running (anchor)", running, runningProcesses)] {
                report.row(["\(name)", "\(usage.cpuMilliseconds)", "\(usage.voluntary + usage.involuntary)", "\(usage.voluntary)", "\(usage.involuntary)", "\(processes)"])
            }
            report.line()
            let frozenWakeups = frozen.voluntary + frozen.involuntary
            let runningWakeups = running.voluntary + running.involuntary
            let met = frozen.cpuMilliseconds == 0 && frozenWakeups == 0 && stayedFrozen
            report.line("Frozen / running: CPU \(Figure.ratio(frozen.cpuMilliseconds, running.cpuMilliseconds)), wake-ups "
                + "\(Figure.ratio(frozenWakeups, runningWakeups)) (goal 0): \(Figure.verdict(met))"
                + (stayedFrozen ? "; the frozen scope read `frozen 1` throughout." : "; **the frozen scope did not stay frozen**."))
            try report.finish()
        }
    }

    /// Two identical busy apps (a foot window printing the date every 50 ms, and a subscriber of
    /// `settings/busy/**` in the same scope), over the same window of `busySeconds` with 10
    /// changes a second: A in the background, frozen by the daemon; B focused.
    func measureBusy(frozen: App, running: App) throws -> BusyResult {
        guard let bus else { return BusyResult() }
        Self.progress("a busy app: \(busySeconds) s frozen vs running")
        try focus(frozen)
        try bus.waitForState(frozen.appID, "foreground")
        sleep(1)
        try focus(running)
        try bus.waitForState(frozen.appID, "frozen")
        var result = BusyResult()
        let beforeFrozen = ScopeUsage(frozen.scope), beforeRunning = ScopeUsage(running.scope)
        let started = monotonicNanoseconds()
        let end = started + Int64(busySeconds) * 1_000_000_000
        var next = started
        var stayedFrozen = true
        while next < end {
            bus.portal.change(namespace: "busy", key: "k\(result.events % Self.keys)", value: Int64(result.events + 1))
            bus.portal.flush()
            result.events += 1
            if result.events % 10 == 0, !frozen.scope.isFrozen { stayedFrozen = false }
            next += 100_000_000
            while monotonicNanoseconds() < next {
                bus.portal.serve()
                usleep(UInt32(max(1_000, min(20_000, (next - monotonicNanoseconds()) / 1000))))
            }
        }
        let afterFrozen = ScopeUsage(frozen.scope), afterRunning = ScopeUsage(running.scope)
        result.seconds = Double(monotonicNanoseconds() - started) / 1e9
        result.frozen = afterFrozen.since(beforeFrozen)
        result.running = afterRunning.since(beforeRunning)
        result.frozenProcesses = afterFrozen.cpuTime.count
        result.runningProcesses = afterRunning.cpuTime.count
        result.stayedFrozen = stayedFrozen && frozen.scope.isFrozen
        return result
    }
}
