import BenchSupport
import Harness

#if canImport(Glibc)
import Glibc
#endif

/// 2. Focus → every current value: a frozen app's subscriber, against the same app kept running.
extension LifecycleRun {
    struct FlushResult {
        var frozenTimes = Samples()
        var frozenMessages = Samples()
        var frozenNotifications = Samples()
        var runningTimes = Samples()
        var runningMessages = Samples()
        var runningNotifications = Samples()
        var changes = 0

        func write(keys: Int) throws {
            var report = ReportPart("lifecycle-2-flush")
            report.line("2. Focus → the app's subscriber has every current value: \(keys) keys × \(changes / keys) "
                + "changes (\(changes) events) while the app was frozen vs while it ran; \(frozenTimes.count) rounds each, alternating")
            report.line()
            report.header(["the app", "what is timed", "`Events` messages (median, max)", "notifications (median)", "median", "min", "max"], leftColumns: 2)
            report.row([
                "frozen by notifybusd, then focused", "focus command written → the subscriber holds every last value (thaw and flush)",
                "\(frozenMessages.p50) (\(frozenMessages.max))", "\(frozenNotifications.p50)", Figure.milliseconds(frozenTimes.p50),
                Figure.milliseconds(frozenTimes.min), Figure.milliseconds(frozenTimes.max),
            ])
            report.row([
                "kept running, focused (anchor)", "first of the \(changes) signals sent → the subscriber holds every last value",
                "\(runningMessages.p50) (\(runningMessages.max))", "\(runningNotifications.p50)", Figure.milliseconds(runningTimes.p50),
                Figure.milliseconds(runningTimes.min), Figure.milliseconds(runningTimes.max),
            ])
            report.line()
            report.line("Frozen / running: messages \(Figure.ratio(frozenMessages.p50, runningMessages.p50)), notifications "
                + "\(Figure.ratio(frozenNotifications.p50, runningNotifications.p50)) (\(frozenNotifications.p50) against "
                + "\(runningNotifications.p50); goal 1 per key: \(Figure.verdict(frozenNotifications.p50 == Int64(keys)))), time "
                + "\(Figure.ratio(frozenTimes.p50, runningTimes.p50, places: 3)) (goal ≤ 0.1×): "
                + "\(Figure.verdict(frozenTimes.p50 * 10 <= runningTimes.p50)).")
            report.line("Per round (frozen, running): "
                + zip(frozenTimes.values, runningTimes.values).map { "\(Figure.milliseconds($0)) / \(Figure.milliseconds($1))" }
                .joined(separator: ", "))
            try report.finish()
        }
    }

    /// Alternating rounds on the app `org.bench.Sub` (a foot window and a subscriber of
    /// `settings/flush/**` in its scope): frozen (sent to the background, frozen by the daemon,
    /// 10 keys × 100 changes, then focused: focus → the subscriber holds every last value) and
    /// running (focused throughout: the first change sent → the subscriber holds every last value).
    func measureFlush(_ app: App, home: App, subscriber: ChildProcess) throws -> FlushResult {
        guard let bus else { return FlushResult() }
        Self.progress("focus → every current value: \(flushRounds) rounds frozen, \(flushRounds) running")
        let changesPerKey = 100
        var result = FlushResult()
        result.changes = Self.keys * changesPerKey
        try focus(app)
        try bus.waitForState(app.appID, "foreground")
        func burst(_ base: Int64) {
            for index in 0..<result.changes {
                bus.portal.change(namespace: "flush", key: "k\(index % Self.keys)", value: base + Int64(index))
            }
            bus.portal.flush()
        }
        func done() throws -> (time: Int64, messages: Int64, notifications: Int64) {
            guard let line = subscriber.readLine(timeout: .seconds(30), meanwhile: bus.portal.serve) else {
                throw HarnessError("the subscriber did not catch up within 30 s")
            }
            let words = line.split(separator: " ").dropFirst().compactMap { Int64($0) }
            guard line.hasPrefix("done "), words.count == 3 else { throw HarnessError("unexpected line from the subscriber: \(line)") }
            return (words[0], words[1], words[2])
        }
        for round in 0..<(2 * flushRounds) {
            let base = Int64(round + 1) * 1_000_000
            let threshold = base + Int64(result.changes - Self.keys)
            let last = Dictionary(uniqueKeysWithValues: (0..<Self.keys).map { ("k\($0)", base + Int64(result.changes - Self.keys + $0)) })
            subscriber.send("expect \(threshold)")
            usleep(20_000)
            if round % 2 == 0 {
                try focus(home)
                try bus.waitForState(app.appID, "frozen")
                burst(base)
                try bus.waitUntilDaemonHas(namespace: "flush", last)
                usleep(50_000)
                let focused = monotonicNanoseconds()
                try focus(app)
                let (time, messages, notifications) = try done()
                result.frozenTimes.append(time - focused)
                result.frozenMessages.append(messages)
                result.frozenNotifications.append(notifications)
            } else {
                let sent = monotonicNanoseconds()
                burst(base)
                let (time, messages, notifications) = try done()
                result.runningTimes.append(time - sent)
                result.runningMessages.append(messages)
                result.runningNotifications.append(notifications)
                try bus.waitUntilDaemonHas(namespace: "flush", last)
            }
            usleep(200_000)
        }
        return result
    }
}
