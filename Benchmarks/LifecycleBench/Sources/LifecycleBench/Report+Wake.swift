import BenchDBus

extension Report {
    /// 5. Woken by a message.
    func wakeTable() {
        let frozen = wake.frozenCall, running = wake.runningCall, thawed = wake.messageThaw
        Swift.print("5. Woken by a message: `Ping` to the D-Bus service of an app frozen by notifybusd (`--freeze-wake-grace 1`) → its reply, "
            + "against the same call to the same app running just after; a unicast signal to it → its scope's `cgroup.events` reads "
            + "`frozen 0`; \(frozen.count) rounds (\(Stats.decimal(Double(wake.elapsed) / 1e9, places: 0)) s)")
        Swift.print("")
        Swift.print("| what | rounds | p50 | p90 | p99 (nearest rank) | min | max |")
        Swift.print("|---|---:|---:|---:|---:|---:|---:|")
        for (name, values) in [("call to the frozen app → reply", frozen), ("the same call, the app running (anchor)", running),
                               ("unicast signal to the frozen app → `frozen 0`", thawed)] {
            Swift.print("| \(name) | \(values.count) | \(Stats.micro(Stats.percentile(values, 0.5))) | \(Stats.micro(Stats.percentile(values, 0.9))) | "
                + "\(Stats.micro(Stats.percentile(values, 0.99))) | \(Stats.micro(values.min() ?? 0)) | \(Stats.micro(values.max() ?? 0)) |")
        }
        Swift.print("")
        let margin: Int64 = 15_000_000
        let p50 = (Stats.percentile(frozen, 0.5), Stats.percentile(running, 0.5))
        let p99 = (Stats.percentile(frozen, 0.99), Stats.percentile(running, 0.99))
        let callMet = p50.0 <= p50.1 + margin && p99.0 <= p99.1 + margin
        let thawP99 = Stats.percentile(thawed, 0.99)
        Swift.print("Frozen − running: p50 +\(Stats.milli(p50.0 - p50.1)), p99 +\(Stats.milli(p99.0 - p99.1)) (goal ≤ +15 ms at both): "
            + "\(callMet ? "met" : "**missed**"). Message → `frozen 0` p99 \(Stats.milli(thawP99)) (goal ≤ 100 ms): "
            + "\(thawP99 <= 100_000_000 ? "met" : "**missed**").")
    }
}
