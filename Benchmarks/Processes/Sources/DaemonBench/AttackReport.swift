import BenchSupport
import Harness
/// The Markdown tables of `DaemonBench attacks`: latency against the goal, memory against the specification's
/// bound, and what each attacker did.
struct AttackReport {
    let attacks: [Attack]
    let outcomes: [AttackBenchmark.Outcome]
    let signals: Int
    let warmup: Int

    /// The specification's bound: the memory the daemon may take beyond its idle size, besides held entries and twice
    /// the message being received, in KiB.
    static let allowanceKiB: Int64 = 32 * 1024
    /// What one held entry is allowed (about 142 B measured by `idle`), in KiB.
    static let heldEntryKiB: Int64 = 1

    /// The report's one part.
    var report = ReportPart("daemon-attacks")

    /// Prints the tables and writes them to their file.
    mutating func write() throws {
        let pooled = outcomes.flatMap(\.quiet.latencies)
        let reference = Samples(pooled).percentile(0.99)
        report.line("Live latency under attack: a portal `SettingChanged` → a well-behaved subscriber has the value, through notifybusd "
            + "(\(signals) signals per phase, one at a time, after \(warmup) of warm-up; a fresh bus and daemon per attack, "
            + "the attacker started after the phase with none)")
        report.line()
        report.line("| attack (specification: D-Bus interface, \"Broken and hostile clients\"), another process at full speed | signals (lost) | p50 | p90 | p99 | max | p99 / no attacker | the same daemon with no attacker, p50 / p99 | goal p99 ≤ 2× |")
        report.line("|---|---:|---:|---:|---:|---:|---:|---:|---|")
        report.line("| no attacker (every daemon's phase before its attack, pooled) | \(pooled.count) (\(outcomes.map(\.quiet.lost).reduce(0, +))) | "
            + "\(Figure.microseconds(Samples(pooled).percentile(0.5))) | \(Figure.microseconds(Samples(pooled).percentile(0.9))) | \(Figure.microseconds(reference)) | "
            + "\(Figure.microseconds(pooled.max() ?? 0)) | 1.00× | | |")
        var latencyMet: [Character] = [], latencyMissed: [Character] = [], contractMissed: [Character] = [], probeMissed: [Character] = []
        for (attack, outcome) in zip(attacks, outcomes) {
            let values = outcome.attacked.latencies
            let p99 = Samples(values).percentile(0.99)
            let met = outcome.attacked.lost == 0 && !values.isEmpty && p99 <= 2 * reference
            if met { latencyMet.append(attack.letter) } else { latencyMissed.append(attack.letter) }
            if outcome.attacked.lost > 0 || values.isEmpty || p99 > 100_000_000 { contractMissed.append(attack.letter) }
            let probe = outcome.probeAttacked
            if probe.count != 5 || probe[1] > 0 || probe[3] > probeBound(outcome) || !outcome.answersVersion { probeMissed.append(attack.letter) }
            let own = outcome.quiet.latencies
            report.line("| \(attack.letter). \(attack.title) | \(values.count) (\(outcome.attacked.lost)) | \(Figure.microseconds(Samples(values).percentile(0.5))) | "
                + "\(Figure.microseconds(Samples(values).percentile(0.9))) | \(Figure.microseconds(p99)) | \(Figure.microseconds(values.max() ?? 0)) | \(Figure.ratio(p99, reference)) | "
                + "\(Figure.microseconds(Samples(own).percentile(0.5))) / \(Figure.microseconds(Samples(own).percentile(0.99))) (\(Figure.ratio(p99, Samples(own).percentile(0.99)))) | "
                + "\(met ? "met" : "**missed**") |")
        }
        report.line()
        memory()
        report.line()
        attackers()
        report.line()
        if outcomes.contains(where: { !$0.probePlain.isEmpty }) {
            anchored()
            report.line()
        }
        report.line("Live p99 ≤ 2× with no attacker (Benchmarks/README.md, \"Targets\"): met under \(list(latencyMet)), missed under \(list(latencyMissed)). "
            + "Live events within 100 ms at p99, none lost (specification: D-Bus interface, \"Broken and hostile clients\"): missed under \(list(contractMissed)). "
            + "Another client's `Get Version` answered within 100 ms at p99 (where messages larger than 8 MiB are in flight: no later than "
            + "the plain libdbus service at p99), none failed, and after the attack (the same article): missed under \(list(probeMissed)).")
        try report.finish()
    }

    private mutating func memory() {
        report.line("| attack | largest message | daemon idle (`VmRSS`) | peak during the attack | peak − idle | bound: idle + 32 MiB + 2 × message + held | after the attacker left | goal |")
        report.line("|---|---:|---:|---:|---:|---:|---:|---|")
        var met: [Character] = [], missed: [Character] = []
        for (attack, outcome) in zip(attacks, outcomes) {
            let message = Int64(outcome.largestMessage + 1023) / 1024
            let bound = outcome.idle + Self.allowanceKiB + 2 * message + Int64(attack.heldEntries) * Self.heldEntryKiB
            let ok = outcome.peak <= bound
            if ok { met.append(attack.letter) } else { missed.append(attack.letter) }
            report.line("| \(attack.letter) | \(outcome.largestMessage > 0 ? mebibytes(message) : "–") | \(mebibytes(outcome.idle)) | "
                + "\(mebibytes(outcome.peak))\(outcome.peakReset ? "" : " (sampled `VmRSS`)") | \(mebibytes(outcome.peak - outcome.idle)) | "
                + "\(mebibytes(bound)) | \(mebibytes(outcome.after)) | \(ok ? "met" : "**missed**") |")
        }
        report.line()
        report.line("Peak: `VmHWM` after it was reset (`echo 5 > /proc/PID/clear_refs`) as the attack's measurement began, or the most "
            + "`VmRSS` read after every tenth signal; held entries allowed 1 KiB each. Memory within the bound: met under \(list(met)), missed under \(list(missed)).")
    }

    private mutating func attackers() {
        report.line("| attack | calls sent | answered | answered per second | answers | `Events` it received | CPU in the window: notifybusd / dbus-daemon / attacker / subscriber | another client's `Get Version` in the window: p99 / slowest (calls, failed) | with no attacker | the daemon answers `Get Version` after it |")
        report.line("|---|---:|---:|---:|---|---:|---|---:|---:|---|")
        for (attack, outcome) in zip(attacks, outcomes) {
            let words = outcome.report
            let cpu = outcome.cpu.map { Figure.decimal(Double($0) * 100 / Double(max(1, outcome.window)), places: 0) + " %" }.joined(separator: " / ")
            let probes = "| \(probe(outcome.probeAttacked)) | \(probe(outcome.probeQuiet)) |"
            guard words.count == 4, let answered = Int64(words[1]) else {
                report.line("| \(attack.letter) | – | – | – | (no report) | – | \(cpu) " + probes + " \(outcome.answersVersion ? "yes" : "**no**") |")
                continue
            }
            let rate = outcome.window > 0 ? Double(answered) * 1e9 / Double(outcome.window) : 0
            report.line("| \(attack.letter) | \(words[0]) | \(words[1]) | \(Figure.decimal(rate, places: 0)) | "
                + "\(words[3].split(separator: ",").joined(separator: ", ")) | \(words[2]) | \(cpu) " + probes + " \(outcome.answersVersion ? "yes" : "**no**") |")
        }
        report.line()
        report.line("Calls counted from `go` to `stop` (the settling time, then the measured window), not those made while it prepared; "
            + "the rate and the CPU time (all threads, in % of one CPU) are over the measured window.")
        for (attack, outcome) in zip(attacks, outcomes) where !outcome.log.isEmpty {
            report.line()
            report.line("notifybusd's log during \(attack.letter): \(outcome.log.count) lines; the first: `\(outcome.log[0].prefix(300))`")
        }
    }

    /// `Get Version`'s bound at p99, in ns: the plain libdbus service's p99 under the same attack
    /// where it was measured (messages larger than 8 MiB), else 100 ms.
    private func probeBound(_ outcome: AttackBenchmark.Outcome) -> Int64 {
        outcome.largestMessage > AttackBenchmark.anchoredMessage ? (outcome.probePlain.count == 5 ? outcome.probePlain[3] : 0) : 100_000_000
    }

    /// notifybusd's `Get Version` against the plain libdbus service's under the same attack.
    private mutating func anchored() {
        report.line("Where messages larger than 8 MiB are in flight: another client's `Get Version` of notifybusd against a plain "
            + "libdbus service (`DaemonBench plain`) on the same bus, the same attacker sending it the same calls, measured in the same run "
            + "over a window as long, the subscriber's signals going on through notifybusd meanwhile")
        report.line()
        report.line("| attack | notifybusd: p99 / slowest (calls, failed) | the plain libdbus service: p99 / slowest (calls, failed) | p99 ratio | its attacker: sent, answered, answers | bound: p99 no later than the plain service's |")
        report.line("|---|---:|---:|---:|---|---|")
        for (attack, outcome) in zip(attacks, outcomes) where outcome.largestMessage > AttackBenchmark.anchoredMessage {
            let ours = outcome.probeAttacked, plain = outcome.probePlain
            let ratio = ours.count == 5 && plain.count == 5 ? Figure.ratio(ours[3], plain[3]) : "–"
            let met = ours.count == 5 && plain.count == 5 && ours[1] == 0 && ours[3] <= plain[3]
            let words = outcome.plainReport
            let said = words.count == 4 ? "\(words[0]), \(words[1]), \(words[3].split(separator: ",").joined(separator: ", "))" : "(no report)"
            report.line("| \(attack.letter) | \(probe(ours)) | \(probe(plain)) | \(ratio) | \(said) | \(met ? "met" : "**missed**") |")
        }
    }

    /// A probe's report as `p99 / slowest (calls, failed)`.
    private func probe(_ words: [Int64]) -> String {
        guard words.count == 5 else { return "(no report)" }
        return "\(Figure.milliseconds(words[3])) / \(Figure.milliseconds(words[4])) (\(words[0]), \(words[1]) failed)"
    }

    private func mebibytes(_ kib: Int64) -> String { Figure.decimal(Double(kib) / 1024, places: 1) + " MiB" }

    private func list(_ letters: [Character]) -> String { letters.isEmpty ? "none" : letters.map(String.init).joined(separator: ", ") }
}
