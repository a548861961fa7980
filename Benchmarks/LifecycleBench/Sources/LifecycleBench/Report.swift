import BenchDBus
/// The Markdown tables of `LifecycleBench run`.
struct Report {
    let run: LifecycleRun
    let memory: LifecycleRun.MemoryResult
    let residentAfter: Int64
    let thaw: LifecycleRun.ThawResult
    let flush: LifecycleRun.FlushResult
    let wake: LifecycleRun.WakeResult
    let busy: LifecycleRun.BusyResult
    let idle: LifecycleRun.IdleResult

    func print() {
        thawTable()
        Swift.print("")
        flushTable()
        Swift.print("")
        wakeTable()
        Swift.print("")
        busyTable()
        Swift.print("")
        idleTable()
    }

    private func thawTable() {
        let daemon = thaw.daemon, anchor = thaw.anchor
        let p50 = (Stats.percentile(daemon, 0.5), Stats.percentile(anchor, 0.5))
        let p99 = (Stats.percentile(daemon, 0.99), Stats.percentile(anchor, 0.99))
        Swift.print("1. Focus → the app's cgroup thawed: sway `[con_id=N] focus` written → inotify on the app scope's `cgroup.events`, "
            + "which then reads `frozen 0`; \(daemon.count) + \(anchor.count) rounds alternating on the same \(LifecycleRun.thawApps) "
            + "windows (\(Stats.decimal(Double(thaw.elapsed) / 1e9, places: 0)) s)")
        Swift.print("")
        Swift.print("| thawed by | rounds | p50 | p90 | p99 (nearest rank) | min | max |")
        Swift.print("|---|---:|---:|---:|---:|---:|---:|")
        for (name, values) in [("notifybusd `--freeze-background --toplevels sway`", daemon),
                               ("FocusThaw, bare C: sway `window` event → `write(cgroup.freeze, \"0\")` (anchor)", anchor)] {
            Swift.print("| \(name) | \(values.count) | \(Stats.micro(Stats.percentile(values, 0.5))) | \(Stats.micro(Stats.percentile(values, 0.9))) | "
                + "\(Stats.micro(Stats.percentile(values, 0.99))) | \(Stats.micro(values.min() ?? 0)) | \(Stats.micro(values.max() ?? 0)) |")
        }
        Swift.print("")
        let met = p50.0 * 10 <= p50.1 * 12 && p99.0 * 10 <= p99.1 * 12
        Swift.print("Sorted, µs: notifybusd " + daemon.sorted().map { Stats.decimal(Double($0) / 1000, places: 0) }.joined(separator: " "))
        Swift.print("")
        Swift.print("Sorted, µs: FocusThaw " + anchor.sorted().map { Stats.decimal(Double($0) / 1000, places: 0) }.joined(separator: " "))
        Swift.print("")
        Swift.print("notifybusd / anchor: p50 \(Stats.ratio(p50.0, p50.1, places: 3)), p99 \(Stats.ratio(p99.0, p99.1, places: 3)) (goal ≤ 1.2×): \(met ? "met" : "**missed**").")
    }

    private func flushTable() {
        let frozenTime = Stats.percentile(flush.frozenTimes, 0.5), runningTime = Stats.percentile(flush.runningTimes, 0.5)
        let frozenMessages = Stats.percentile(flush.frozenMessages, 0.5), runningMessages = Stats.percentile(flush.runningMessages, 0.5)
        Swift.print("2. Focus → the app's subscriber has every current value: \(LifecycleRun.keys) keys × \(flush.changes / LifecycleRun.keys) "
            + "changes (\(flush.changes) events) while the app was frozen vs while it ran; \(flush.frozenTimes.count) rounds each, alternating")
        Swift.print("")
        Swift.print("| the app | what is timed | `Events` messages (median, max) | notifications (median) | median | min | max |")
        Swift.print("|---|---|---:|---:|---:|---:|---:|")
        Swift.print("| frozen by notifybusd, then focused | focus command written → the subscriber holds every last value (thaw and flush) | "
            + "\(frozenMessages) (\(flush.frozenMessages.max() ?? 0)) | \(Stats.percentile(flush.frozenNotifications, 0.5)) | "
            + "\(Stats.milli(frozenTime)) | \(Stats.milli(flush.frozenTimes.min() ?? 0)) | \(Stats.milli(flush.frozenTimes.max() ?? 0)) |")
        Swift.print("| kept running, focused (anchor) | first of the \(flush.changes) signals sent → the subscriber holds every last value | "
            + "\(runningMessages) (\(flush.runningMessages.max() ?? 0)) | \(Stats.percentile(flush.runningNotifications, 0.5)) | "
            + "\(Stats.milli(runningTime)) | \(Stats.milli(flush.runningTimes.min() ?? 0)) | \(Stats.milli(flush.runningTimes.max() ?? 0)) |")
        Swift.print("")
        let frozenNotifications = Stats.percentile(flush.frozenNotifications, 0.5)
        let runningNotifications = Stats.percentile(flush.runningNotifications, 0.5)
        Swift.print("Frozen / running: messages \(Stats.ratio(frozenMessages, runningMessages)), notifications "
            + "\(Stats.ratio(frozenNotifications, runningNotifications)) (\(frozenNotifications) against \(runningNotifications); goal 1 per key: "
            + "\(frozenNotifications == Int64(LifecycleRun.keys) ? "met" : "**missed**")), time \(Stats.ratio(frozenTime, runningTime, places: 3)) "
            + "(goal ≤ 0.1×): \(frozenTime * 10 <= runningTime ? "met" : "**missed**").")
        Swift.print("Per round (frozen, running): "
            + zip(flush.frozenTimes, flush.runningTimes).map { "\(Stats.milli($0)) / \(Stats.milli($1))" }.joined(separator: ", "))
    }

    private func busyTable() {
        Swift.print("3. A busy app (foot printing the date every 50 ms, and a subscriber in the same scope of a key changed 10 times a second): "
            + "\(Stats.decimal(busy.seconds, places: 1)) s, both apps over the same window, \(busy.events) changes sent")
        Swift.print("")
        Swift.print("| the app | CPU time (ms) | wake-ups: voluntary + involuntary context switches | voluntary | involuntary | processes at the end |")
        Swift.print("|---|---:|---:|---:|---:|---:|")
        for (name, usage, processes) in [("in the background, frozen by notifybusd", busy.frozen, busy.frozenProcesses),
                                         ("focused, running (anchor)", busy.running, busy.runningProcesses)] {
            Swift.print("| \(name) | \(usage.cpuMilliseconds) | \(usage.voluntary + usage.involuntary) | \(usage.voluntary) | \(usage.involuntary) | \(processes) |")
        }
        Swift.print("")
        let frozenWakeups = busy.frozen.voluntary + busy.frozen.involuntary
        let runningWakeups = busy.running.voluntary + busy.running.involuntary
        let met = busy.frozen.cpuMilliseconds == 0 && frozenWakeups == 0 && busy.stayedFrozen
        Swift.print("Frozen / running: CPU \(Stats.ratio(busy.frozen.cpuMilliseconds, busy.running.cpuMilliseconds)), wake-ups "
            + "\(Stats.ratio(frozenWakeups, runningWakeups)) (goal 0): \(met ? "met" : "**missed**")"
            + (busy.stayedFrozen ? "; the frozen scope read `frozen 1` throughout." : "; **the frozen scope did not stay frozen**."))
    }

    private func idleTable() {
        let voluntary = idle.threads.reduce(Int64(0)) { $0 + $1.voluntary }
        let involuntary = idle.threads.reduce(Int64(0)) { $0 + $1.involuntary }
        Swift.print("4. notifybusd with the policy on, idle: \(run.idleSeconds) s with nothing changing and no freeze pending "
            + "(\(idle.states.filter { $0.value == "frozen" }.count) apps frozen, \(idle.states.filter { $0.value == "foreground" }.count) in the foreground)")
        Swift.print("")
        Swift.print("| thread | wake-ups (voluntary context switches) | involuntary |")
        Swift.print("|---|---:|---:|")
        for thread in idle.threads {
            Swift.print("| \(thread.name) (\(thread.id)) | \(thread.voluntary) | \(thread.involuntary) |")
        }
        Swift.print("| all \(idle.threads.count) threads | \(voluntary) | \(involuntary) |")
        Swift.print("")
        Swift.print("Idle wake-ups (goal 0): \(voluntary) — \(voluntary == 0 ? "met" : "**missed**").")
        Swift.print("")
        let extra = memory.policy - memory.plain
        Swift.print("| notifybusd, settled `VmRSS` (least of 5 readings over 250 ms) | KiB |")
        Swift.print("|---|---:|")
        Swift.print("| `--source settings --source lifecycle --freeze-background`, \(run.treeApps) windows known, all but one frozen, 3 subscribers | \(memory.policy) |")
        Swift.print("| `--source settings`, no policy, on a bus of its own with the same values and 3 subscribers (anchor) | \(memory.plain) |")
        Swift.print("| the first, after the whole run | \(residentAfter) |")
        Swift.print("")
        Swift.print("With the policy on: \(extra >= 0 ? "+" : "")\(extra) KiB (\(Stats.ratio(memory.policy, memory.plain))); goal ≤ +1024 KiB: "
            + "\(extra <= 1024 ? "met" : "**missed**").")
    }
}
