import BenchSupport
import Harness
/// One attack on notifybusd (specification: D-Bus interface, "Broken and hostile clients") as `DaemonBench attacks` runs it: what the `Attacker` process
/// does, and the bus it runs on.
struct Attack {
    /// Its letter (`a` to `g` as the brief lists them, then `h`), for `--only`.
    let letter: Character
    /// What it is, for the tables.
    let title: String
    let kind: Attacker.Kind
    /// Options of the `Attacker` process besides its kind and address.
    var options: [String] = []
    /// `<limit>`s of the private bus's configuration.
    var limits: [String: Int] = [:]
    /// Changes of a key only the attacker's patterns match (`settings/fill/k`), sent before the
    /// measurement: they fill the bus's queue for a client that does not read.
    var fill = 0
    /// Entries the daemon holds for it during the measurement (suspended subscriptions × keys),
    /// which the specification's memory bound allows beyond its 32 MiB.
    var heldEntries = 0
    /// Measures for the whole of `seconds` (the benchmark's bound) whatever the number of signals:
    /// for an attack whose effect comes and goes.
    var measuresWholeWindow = false

    /// The attacks, a to h (specification: D-Bus interface, "Broken and hostile clients"). `sleeperQueue` is the bus's `max_outgoing_bytes`
    /// for attack f (0: dbus-daemon's default, 127 MiB).
    static func all(sleeperQueue: Int) -> [Attack] {
        [
            Attack(letter: "a", title: "`Snapshot` of 1,000,000 one-letter patterns (8 MB body, refused unread), 2 in flight", kind: .snapshot),
            Attack(letter: "b", title: "30 MB `ay` to an object that does not exist, 2 in flight", kind: .body),
            Attack(
                letter: "c",
                title: "one connection holding 64 subscriptions × 64 patterns × 1024 bytes (`a/a/…`); the oldest cancelled and a new one made, 4 pairs in flight",
                kind: .patterns),
            Attack(letter: "d", title: "pipelined `Subscribe(settings/**)`/`Cancel` pairs, 32 calls in flight", kind: .pairs),
            Attack(
                letter: "e",
                title: "mixed flood, 64 in flight: valid Subscribe/Cancel, wrong signature, 200 KB body, `Snapshot` of 64 × 1024-byte patterns, unknown object",
                kind: .mixed),
            Attack(
                letter: "f",
                title: "a subscriber that never reads (1 subscription to `settings/**`; the bus queues "
                    + (sleeperQueue > 0 ? "\(sleeperQueue / 1024) KiB" : "its default 127 MiB") + " for it, filled by 2,000 events first)",
                kind: .sleeper, limits: sleeperQueue > 0 ? ["max_outgoing_bytes": sleeperQueue] : [:], fill: 2000),
            Attack(
                letter: "g", title: "a stopped subscriber (SIGSTOP): 4 connections × 64 subscriptions to `settings/**`",
                kind: .stopped, heldEntries: 256),
            Attack(
                letter: "h",
                title: "(beyond the brief's list) b's 30 MB bodies, and behind them, over and over, 4 new connections each sending 64 `Subscribe` of 64 × 1024-byte patterns at once",
                kind: .burst, measuresWholeWindow: true),
        ]
    }
}
