import Harness
#if canImport(Glibc)
import Glibc
#endif

/// The figures of a run, and the Markdown tables that show them.
struct Report {
    let samples: [Sample]
    /// For each half, the receivers in the order the uevent sender served their sockets.
    let orders: [[String]]
    let lost: Int
    let control: Bool
    /// Warm-up uevents per half (not in `samples`).
    let warmup: Int

    var complete: [Sample] { samples.filter { $0.isComplete && (!control || $0.control != 0) } }
    var mismatches: Int { samples.filter(\.mismatch).count }

    /// Latencies in µs of `samples`, sorted.
    static func latencies(_ samples: [Sample], _ time: (Sample) -> UInt64) -> [Double] {
        samples.map { Double(time($0) &- $0.sent) / 1000 }.sorted()
    }

    /// Per-uevent differences in µs (`a − b`), sorted.
    static func differences(_ samples: [Sample], _ a: (Sample) -> UInt64, _ b: (Sample) -> UInt64) -> [Double] {
        samples.map { (Double(a($0)) - Double(b($0))) / 1000 }.sorted()
    }

    /// The `p` percentile of `sorted` by nearest rank (`nan` when empty).
    static func percentile(_ sorted: [Double], _ p: Double) -> Double { sorted.percentile(p) ?? .nan }

    static func p50(_ values: [Double]) -> Double { percentile(values, 0.5) }
    static func p90(_ values: [Double]) -> Double { percentile(values, 0.9) }

    var markdown: String {
        let all = complete
        let bare = Self.latencies(all, \.bare)
        let parsed = Self.latencies(all, \.bareParsed)
        let bus = Self.latencies(all, \.bus)
        func us(_ value: Double) -> String { format(value, 1) + " µs" }
        func signed(_ value: Double) -> String { (value >= 0 ? "+" : "") + format(value, 1) + " µs" }
        func ratio(_ a: Double, _ b: Double) -> String { format(a / b, 2) + "×" }

        var lines: [String] = []
        lines.append("| receiver (same uevents, both halves) | p50 | p90 | bus / this, p50 | bus / this, p90 | bus − this, p50 |")
        lines.append("|---|---:|---:|---:|---:|---:|")
        func row(_ name: String, _ values: [Double]) {
            lines.append("| \(name) | \(us(Self.p50(values))) | \(us(Self.p90(values))) | "
                + "\(ratio(Self.p50(bus), Self.p50(values))) | \(ratio(Self.p90(bus), Self.p90(values))) | "
                + "\(signed(Self.p50(bus) - Self.p50(values))) |")
        }
        row("bare libudev monitor, `udev_monitor_receive_device` returned (anchor)", bare)
        row("bare monitor + `PowerSupplyReading` of the device (anchor that parses, like the source)", parsed)
        if control { row("(control) a second bare monitor", Self.latencies(all, \.control)) }
        lines.append("| **bus**: PowerSupplySource on its EventLoopThread → `publishIfChanged` → callback "
            + "| \(us(Self.p50(bus))) | \(us(Self.p90(bus))) | | | |")

        // By half: the order umockdev served the sockets in, and the per-uevent differences.
        lines.append("")
        lines.append("| half | sockets served in order | bare p50 | bare + parse p50 | bus p50 | bus − bare per uevent, p50 | bus − (bare + parse) per uevent, p50 |")
        lines.append("|---|---|---:|---:|---:|---:|---:|")
        var paired: [Double] = []
        var pairedParsed: [Double] = []
        for (phase, order) in orders.enumerated() {
            let part = all.filter { $0.phase == phase }
            let difference = Self.p50(Self.differences(part, \.bus, \.bare))
            let differenceParsed = Self.p50(Self.differences(part, \.bus, \.bareParsed))
            paired.append(difference)
            pairedParsed.append(differenceParsed)
            lines.append("| \(phase + 1) (\(part.count) uevents) | \(order.joined(separator: ", ")) "
                + "| \(us(Self.p50(Self.latencies(part, \.bare)))) | \(us(Self.p50(Self.latencies(part, \.bareParsed)))) "
                + "| \(us(Self.p50(Self.latencies(part, \.bus)))) | \(signed(difference)) | \(signed(differenceParsed)) |")
        }
        let meanPaired = paired.reduce(0, +) / Double(max(paired.count, 1))
        let meanPairedParsed = pairedParsed.reduce(0, +) / Double(max(pairedParsed.count, 1))

        let added = Self.p50(bus) / Self.p50(bare) - 1
        let addedParsed = Self.p50(bus) / Self.p50(parsed) - 1
        lines.append("")
        lines.append("\(all.count) uevents measured (after \(warmup) of warm-up in each half), \(lost) lost, "
            + "\(mismatches) with an unexpected value. Latency: CLOCK_MONOTONIC just before "
            + "`umockdev_testbed_uevent` → the receiver. The sender serves the sockets one after the other, "
            + "so each half puts the other receiver first; the order-neutral added time is the mean of the "
            + "two halves' per-uevent medians: \(signed(meanPaired)) over the bare monitor, "
            + "\(signed(meanPairedParsed)) over bare + parsing.")
        lines.append("")
        lines.append("Target \"bus adds ≤ 10%\" (p50, both halves): "
            + "\(added <= 0.10 ? "met" : "**missed**") against the bare monitor (\(signedPercent(added))), "
            + "\(addedParsed <= 0.10 ? "met" : "**missed**") against bare + parsing (\(signedPercent(addedParsed))).")
        return lines.joined(separator: "\n")
    }

    private func signedPercent(_ fraction: Double) -> String {
        (fraction >= 0 ? "+" : "") + format(fraction * 100, 1) + "%"
    }

    /// One line per measured uevent: the latencies in ns.
    func writeCSV(to path: String) {
        guard let file = fopen(path, "w") else { return }
        defer { fclose(file) }
        fputs("phase,sent_ns,bare_ns,bare_parsed_ns,bus_ns,control_ns\n", file)
        for s in samples {
            let cells = [s.bare, s.bareParsed, s.bus, s.control].map { $0 == 0 ? "" : String($0 &- s.sent) }
            fputs("\(s.phase),\(s.sent),\(cells.joined(separator: ","))\n", file)
        }
    }
}

/// `value` with `digits` decimals.
func format(_ value: Double, _ digits: Int) -> String { Figure.decimal(value, places: digits) }
