import Harness
#if canImport(Glibc)
import Glibc
#endif

/// The figures of a run, and the Markdown that shows them.
struct Report {
    let samples: [Sample]
    let loadAverage: String

    var complete: [Sample] { samples.filter(\.isComplete) }

    /// The `p` percentile of `sorted` by nearest rank (`nan` when empty).
    static func percentile(_ sorted: [Double], _ p: Double) -> Double { sorted.percentile(p) ?? .nan }

    /// (T_n − T0) / (T_c − T0).
    static func ratio(_ s: Sample) -> Double { Double(s.bus &- s.start) / Double(s.bare &- s.start) }
    /// T_n − T_c in µs.
    static func difference(_ s: Sample) -> Double { (Double(s.bus) - Double(s.bare)) / 1e3 }

    var markdown: String {
        let all = complete
        func ms(_ time: UInt64, _ start: UInt64) -> String { format(Double(time &- start) / 1e6, 1) }
        func us(_ value: Double) -> String { (value >= 0 ? "+" : "") + format(value, 0) + " µs" }
        var lines: [String] = []
        lines.append("| sample | half (armed last) | T_c − T0 (bare C) | T_n − T0 (bus) | level | (T_n − T0) / (T_c − T0) | T_n − T_c | bare wake-ups | `normal` after the bare program's last wake-up |")
        lines.append("|---:|---|---:|---:|---|---:|---:|---:|---:|")
        for (index, s) in samples.enumerated() {
            let armedLast = s.half == 0 ? "bare C" : "source"
            guard s.isComplete else {
                lines.append("| \(index + 1) | \(armedLast) | \(s.bare != 0 ? ms(s.bare, s.start) + " ms" : "none") | \(s.bus != 0 ? ms(s.bus, s.start) + " ms" : "none") | \(s.level) | missed | | \(s.bareWakes.count) | |")
                continue
            }
            let normal = s.normal != 0 ? format(Double(s.normal &- (s.bareWakes.filter { $0 < s.normal }.max() ?? s.bare)) / 1e9, 2) + " s" : "not seen"
            lines.append("| \(index + 1) | \(armedLast) | \(ms(s.bare, s.start)) ms | \(ms(s.bus, s.start)) ms | \(s.level) | \(format(Self.ratio(s), 4))× | \(us(Self.difference(s))) | \(s.bareWakes.count) | \(normal) |")
        }
        let ratios = all.map(Self.ratio).sorted()
        let differences = all.map(Self.difference).sorted()
        lines.append("")
        lines.append("| \(all.count) samples of \(samples.count) | p50 | max |")
        lines.append("|---|---:|---:|")
        lines.append("| (T_n − T0) / (T_c − T0) | \(format(Self.percentile(ratios, 0.5), 4))× | \(format(ratios.last ?? .nan, 4))× |")
        lines.append("| T_n − T_c | \(us(Self.percentile(differences, 0.5))) | \(us(differences.last ?? .nan)) |")
        for half in 0..<2 {
            let part = all.filter { $0.half == half }.map(Self.difference).sorted()
            lines.append("| T_n − T_c, \(half == 0 ? "the bare program's trigger armed last" : "the source's triggers armed last") (\(part.count)) | \(us(Self.percentile(part, 0.5))) | \(us(part.last ?? .nan)) |")
        }
        let p50 = Self.percentile(ratios, 0.5), worst = ratios.last ?? .nan
        lines.append("")
        lines.append("Target (T_n − T0) / (T_c − T0) ≤ 1.1×: \(p50 <= 1.1 ? "met" : "**missed**") at p50, "
            + "\(worst <= 1.1 ? "met" : "**missed**") at max; \(samples.count - all.count) sample(s) missed. "
            + "Load average at the end: \(loadAverage).")
        return lines.joined(separator: "\n")
    }

    /// One line per sample: the times in ns after T0.
    func writeCSV(to path: String) {
        guard let file = fopen(path, "w") else { return }
        defer { fclose(file) }
        fputs("half,start_ns,bare_ns,bus_ns,level,normal_ns\n", file)
        for s in samples {
            let cells = [s.bare, s.bus].map { $0 == 0 ? "" : String($0 &- s.start) }
            fputs("\(s.half),\(s.start),\(cells.joined(separator: ",")),\(s.level),\(s.normal == 0 ? "" : String(s.normal &- s.start))\n", file)
        }
    }
}

/// `value` with `digits` decimals.
func format(_ value: Double, _ digits: Int) -> String { Figure.decimal(value, places: digits) }
