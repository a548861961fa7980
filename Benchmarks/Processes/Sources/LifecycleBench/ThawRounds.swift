import BenchSupport
import Harness

#if canImport(Glibc)
import Glibc
#endif

/// How a compositor is told to focus an app, and how the bare anchor of a run takes part in it.
protocol FocusDriver {
    /// Sends the focus of `app` to the compositor, not waiting for its answer.
    func sendFocus(_ app: App) throws
    /// Reads the compositor's answer to the focus just sent.
    func focusAnswered(_ app: App) throws
    /// `app` left the foreground and its next visit is the anchor's: it is frozen now by someone
    /// else than the daemon (which then leaves it alone), and the anchor is to thaw it.
    func prepareAnchor(for app: App) throws
    /// Just before the anchor's focus of `app`.
    func armAnchor(for app: App) throws
    /// After the anchor thawed `app`: what it said of its write.
    func anchorThawed(_ app: App) throws
    /// What the anchor logged, for an error.
    var anchorLog: String { get }
}

/// Focus → the app's cgroup thawed, the daemon and the anchor turn about: a round robin over the
/// apps (an odd number of them, so that each app's visits alternate between the daemon's kind and
/// the anchor's), each step focusing the next app, which the daemon froze (daemon steps) or which
/// was frozen by someone else as soon as it went to the background (anchor steps: the daemon
/// leaves a cgroup frozen by someone else alone, and the anchor thaws it). Measured: the
/// benchmark's clock before it sends the focus → the inotify event after which the app's
/// `cgroup.events` reads `frozen 0`. The first round over the apps is a warm-up.
struct ThawRounds {
    var daemon = Samples()
    var anchor = Samples()
    var elapsed: Int64 = 0

    static func measure(_ apps: [App], rounds: Int, bed: BenchBed, driver: some FocusDriver) throws -> ThawRounds {
        let watch = try EventsWatch()
        for app in apps { try watch.watch(app.scope.eventsFile) }
        let count = apps.count
        let warmup = count
        let steps = warmup + 2 * rounds
        var result = ThawRounds()
        let started = monotonicNanoseconds()
        var focused = count - 1
        func isAnchorStep(_ step: Int) -> Bool { step >= warmup && (step - warmup) % 2 == 1 }
        for step in 0..<steps {
            let index = step % count
            let target = apps[index]
            let anchorStep = isAnchorStep(step)
            if step >= warmup {
                if anchorStep {
                    guard target.scope.isFrozen else { throw HarnessError("\(target.appID) is not frozen before its anchor step") }
                    try driver.armAnchor(for: target)
                } else {
                    try bed.waitUntilFrozenByDaemon(target)
                }
            }
            watch.drain()
            let sent = monotonicNanoseconds()
            try driver.sendFocus(target)
            let thawed = watch.wait(for: "frozen 0", in: target.scope.eventsFile)
            try driver.focusAnswered(target)
            if step >= warmup {
                guard let thawed else {
                    throw HarnessError("\(target.appID) was not thawed within 5 s of its focus (\(anchorStep ? "the anchor" : "notifybusd"))\n"
                        + (anchorStep ? driver.anchorLog : String(bed.daemonLog.suffix(3000))))
                }
                if anchorStep {
                    try driver.anchorThawed(target)
                    result.anchor.append(thawed - sent)
                } else {
                    result.daemon.append(thawed - sent)
                }
            }
            // The app that left the foreground: frozen by someone else now if its next visit is an anchor step.
            let previous = focused
            focused = index
            var visit = step + 1
            while visit % count != previous { visit += 1 }
            if previous != index, visit < steps, isAnchorStep(visit) { try driver.prepareAnchor(for: apps[previous]) }
            usleep(150_000)
            bed.portal.serve()
        }
        result.elapsed = monotonicNanoseconds() - started
        return result
    }

    /// The part's table: `title`, the two rows, their sorted values and the ratio against the goal.
    func write(part name: String, title: String, daemonRow: String, anchorRow: String, anchorName: String) throws {
        var report = ReportPart(name)
        report.line(title + "; \(daemon.count) + \(anchor.count) rounds alternating (\(Figure.decimal(Double(elapsed) / 1e9, places: 0)) s)")
        report.line()
        report.samplesHeader("thawed by")
        report.row(daemonRow, daemon) { Figure.microseconds($0) }
        report.row(anchorRow + " (anchor)", anchor) { Figure.microseconds($0) }
        report.line()
        for (who, samples) in [("notifybusd", daemon), (anchorName, anchor)] {
            report.line("Sorted, µs: \(who) " + samples.sorted.map { Figure.decimal(Double($0) / 1000, places: 0) }.joined(separator: " "))
            report.line()
        }
        let met = daemon.p50 * 10 <= anchor.p50 * 12 && daemon.p99 * 10 <= anchor.p99 * 12
        report.line("notifybusd / anchor: p50 \(Figure.ratio(daemon.p50, anchor.p50, places: 3)), p99 \(Figure.ratio(daemon.p99, anchor.p99, places: 3)) "
            + "(goal ≤ 1.2×): \(Figure.verdict(met)).")
        try report.finish()
    }
}
