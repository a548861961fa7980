import BenchDBus
/// `--name value` options and `--flag`s of a command line, after its mode word.
struct Arguments {
    private var values: [String: String] = [:]
    private var flags: Set<String> = []

    init(_ words: ArraySlice<String>) throws(BenchError) {
        var words = words[...]
        while let word = words.popFirst() {
            guard word.hasPrefix("--") else { throw BenchError("unexpected argument \(word)") }
            let name = String(word.dropFirst(2))
            if let next = words.first, !next.hasPrefix("--") {
                values[name] = next
                words.removeFirst()
            } else {
                flags.insert(name)
            }
        }
    }

    func optional(_ name: String) -> String? { values[name] }

    func string(_ name: String, default value: String) -> String { values[name] ?? value }

    func integer(_ name: String, default value: Int) -> Int { values[name].flatMap { Int($0) } ?? value }

    func flag(_ name: String) -> Bool { flags.contains(name) }

    func choice<T: RawRepresentable>(_ name: String, default value: T) throws(BenchError) -> T where T.RawValue == String {
        guard let text = values[name] else { return value }
        guard let choice = T(rawValue: text) else { throw BenchError("--\(name): unknown value \(text)") }
        return choice
    }
}

/// Percentiles and the benchmark's number formats.
enum Stats {
    /// The `fraction` percentile (nearest rank) of `values`.
    static func percentile(_ values: [Int64], _ fraction: Double) -> Int64 {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, max(0, Int((Double(sorted.count) * fraction).rounded(.up)) - 1))]
    }

    /// Nanoseconds as microseconds with one decimal.
    static func micro(_ nanoseconds: Int64) -> String { decimal(Double(nanoseconds) / 1000, places: 1) + " µs" }

    /// Nanoseconds as milliseconds with two decimals.
    static func milli(_ nanoseconds: Int64) -> String { decimal(Double(nanoseconds) / 1_000_000, places: 2) + " ms" }

    /// `value` with `places` decimals.
    static func decimal(_ value: Double, places: Int) -> String {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = Int64((value * scale).rounded())
        let whole = scaled / Int64(scale), fraction = abs(scaled % Int64(scale))
        guard places > 0 else { return "\(whole)" }
        let digits = String(fraction)
        let sign = scaled < 0 && whole == 0 ? "-" : ""
        return "\(sign)\(whole)." + String(repeating: "0", count: places - digits.count) + digits
    }

    /// `ours / anchor` as `1.23×`.
    static func ratio(_ ours: Int64, _ anchor: Int64, places: Int = 2) -> String {
        anchor == 0 ? "–" : decimal(Double(ours) / Double(anchor), places: places) + "×"
    }
}
