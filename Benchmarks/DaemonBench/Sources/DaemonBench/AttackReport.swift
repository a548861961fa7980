/// The Markdown tables of `DaemonBench attacks`: latency against the goal, memory against §5.4's
/// bound, and what each attacker did.
struct AttackReport {
    let attacks: [Attack]
    let outcomes: [AttackBenchmark.Outcome]
    let signals: Int
    let warmup: Int

    /// §5.4: the memory the daemon may take beyond its idle size, besides held entries and twice
    /// the message being received, in KiB.
    static let allowanceKiB: Int64 = 32 * 1024
    /// What one held entry is allowed (about 142 B measured by `idle`), in KiB.
    static let heldEntryKiB: Int64 = 1

    func print() {
        let pooled = outcomes.flatMap(\.quiet.latencies)
        let reference = Stats.percentile(pooled, 0.99)
        Swift.print("Live latency under attack: a portal `SettingChanged` → a well-behaved subscriber has the value, through notifybusd "
            + "(\(signals) signals per phase, one at a time, after \(warmup) of warm-up; a fresh bus and daemon per attack, "
            + "the attacker started after the phase with none)")
        Swift.print("")
        Swift.print("| attack (CONTRACT §5.4), another process at full speed | signals (lost) | p50 | p90 | p99 | p99 / no attacker | the same daemon with no attacker, p50 / p99 | goal p99 ≤ 2× |")
        Swift.print("|---|---:|---:|---:|---:|---:|---:|---|")
        Swift.print("| no attacker (every daemon's phase before its attack, pooled) | \(pooled.count) (\(outcomes.map(\.quiet.lost).reduce(0, +))) | "
            + "\(Stats.micro(Stats.percentile(pooled, 0.5))) | \(Stats.micro(Stats.percentile(pooled, 0.9))) | \(Stats.micro(reference)) | 1.00× | | |")
        var latencyMet: [Character] = [], latencyMissed: [Character] = []
        for (attack, outcome) in zip(attacks, outcomes) {
            let values = outcome.attacked.latencies
            let p99 = Stats.percentile(values, 0.99)
            let met = outcome.attacked.lost == 0 && !values.isEmpty && p99 <= 2 * reference
            if met { latencyMet.append(attack.letter) } else { latencyMissed.append(attack.letter) }
            let own = outcome.quiet.latencies
            Swift.print("| \(attack.letter). \(attack.title) | \(values.count) (\(outcome.attacked.lost)) | \(Stats.micro(Stats.percentile(values, 0.5))) | "
                + "\(Stats.micro(Stats.percentile(values, 0.9))) | \(Stats.micro(p99)) | \(Stats.ratio(p99, reference)) | "
                + "\(Stats.micro(Stats.percentile(own, 0.5))) / \(Stats.micro(Stats.percentile(own, 0.99))) (\(Stats.ratio(p99, Stats.percentile(own, 0.99)))) | "
                + "\(met ? "met" : "**missed**") |")
        }
        Swift.print("")
        memory()
        Swift.print("")
        attackers()
        Swift.print("")
        Swift.print("Live p99 ≤ 2× with no attacker: met under \(list(latencyMet)), missed under \(list(latencyMissed)).")
    }

    private func memory() {
        Swift.print("| attack | largest message | daemon idle (`VmRSS`) | peak during the attack | peak − idle | bound: idle + 32 MiB + 2 × message + held | after the attacker left | goal |")
        Swift.print("|---|---:|---:|---:|---:|---:|---:|---|")
        var met: [Character] = [], missed: [Character] = []
        for (attack, outcome) in zip(attacks, outcomes) {
            let message = Int64(outcome.largestMessage + 1023) / 1024
            let bound = outcome.idle + Self.allowanceKiB + 2 * message + Int64(attack.heldEntries) * Self.heldEntryKiB
            let ok = outcome.peak <= bound
            if ok { met.append(attack.letter) } else { missed.append(attack.letter) }
            Swift.print("| \(attack.letter) | \(outcome.largestMessage > 0 ? mebibytes(message) : "–") | \(mebibytes(outcome.idle)) | "
                + "\(mebibytes(outcome.peak))\(outcome.peakReset ? "" : " (sampled `VmRSS`)") | \(mebibytes(outcome.peak - outcome.idle)) | "
                + "\(mebibytes(bound)) | \(mebibytes(outcome.after)) | \(ok ? "met" : "**missed**") |")
        }
        Swift.print("")
        Swift.print("Peak: `VmHWM` after it was reset (`echo 5 > /proc/PID/clear_refs`) as the attack's measurement began, or the most "
            + "`VmRSS` read after every tenth signal; held entries allowed 1 KiB each. Memory within the bound: met under \(list(met)), missed under \(list(missed)).")
    }

    private func attackers() {
        Swift.print("| attack | calls sent | answered | answered per second | answers | `Events` it received | the daemon answers `Get Version` after it |")
        Swift.print("|---|---:|---:|---:|---|---:|---|")
        for (attack, outcome) in zip(attacks, outcomes) {
            let words = outcome.report
            guard words.count == 4, let answered = Int64(words[1]) else {
                Swift.print("| \(attack.letter) | – | – | – | (no report) | – | \(outcome.answersVersion ? "yes" : "**no**") |")
                continue
            }
            let rate = outcome.window > 0 ? Double(answered) * 1e9 / Double(outcome.window) : 0
            Swift.print("| \(attack.letter) | \(words[0]) | \(words[1]) | \(Stats.decimal(rate, places: 0)) | "
                + "\(words[3].split(separator: ",").joined(separator: ", ")) | \(words[2]) | \(outcome.answersVersion ? "yes" : "**no**") |")
        }
        Swift.print("")
        Swift.print("Counted from `go` to `stop`: the settling time, then the measured window; the rate is over the window.")
        for (attack, outcome) in zip(attacks, outcomes) where !outcome.log.isEmpty {
            Swift.print("")
            Swift.print("notifybusd's log during \(attack.letter): \(outcome.log.count) lines; the first: `\(outcome.log[0].prefix(300))`")
        }
    }

    private func mebibytes(_ kib: Int64) -> String { Stats.decimal(Double(kib) / 1024, places: 1) + " MiB" }

    private func list(_ letters: [Character]) -> String { letters.isEmpty ? "none" : letters.map(String.init).joined(separator: ", ") }
}
