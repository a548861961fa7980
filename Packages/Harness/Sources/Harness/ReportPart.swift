import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The load average when the run began (`ReportPart.runBegins()`).
private let loadAtRunStart = Mutex<String?>(nil)

/// One part of a benchmark command's report, in Markdown: printed on standard output when it is
/// done, and written to `<results>/<name>.md`, overwritten by each run, its last line saying which
/// run it is: when, the run's own words (the script's: the toolchain, the machine, the peers'
/// versions, the command), and the load average when the run began and when the part was written.
///
/// `<results>` is `$NOTIFYBUS_BENCH_RESULTS` (the scripts in Benchmarks/ set it to
/// `Benchmarks/results`), the run's words `$NOTIFYBUS_BENCH_RUN`; without a directory the part is
/// only printed.
public struct ReportPart {
    /// The file's name without `.md` (`lifecycle-1-focus-thaw`).
    public let name: String
    /// The lines so far.
    public private(set) var lines: [String] = []

    /// A part named `name`.
    public init(_ name: String) {
        self.name = name
    }

    /// Notes the load average as the run begins (a benchmark's first step), for the last line of
    /// every part.
    public static func runBegins() {
        let load = loadAverage()
        loadAtRunStart.withLock { $0 = $0 ?? load }
    }

    /// Adds a line (an empty one: a paragraph break).
    public mutating func line(_ text: String = "") {
        lines.append(text)
    }

    /// Adds a table's header: `cells`, the first `leftColumns` aligned left, the others right.
    public mutating func header(_ cells: [String], leftColumns: Int = 1) {
        row(cells)
        lines.append("|" + cells.indices.map { $0 < leftColumns ? "---|" : "---:|" }.joined())
    }

    /// Adds a table row of `cells`.
    public mutating func row(_ cells: [String]) {
        lines.append("| " + cells.joined(separator: " | ") + " |")
    }

    /// Adds a table row of `name` and what `samples` are: their count, p50, p90, p99, least and
    /// largest, each as `figure` writes it (`Figure.microseconds`), under the header
    /// `samplesHeader(_:)` makes.
    public mutating func row(_ name: String, _ samples: Samples, _ figure: (Int64) -> String) {
        row([name, "\(samples.count)"] + [samples.p50, samples.p90, samples.p99, samples.min, samples.max].map(figure))
    }

    /// The header of `row(_:_:_:)`'s rows, its first column `first` and its second `count`.
    public mutating func samplesHeader(_ first: String, count: String = "rounds") {
        header([first, count, "p50", "p90", "p99 (nearest rank)", "min", "max"])
    }

    /// Prints the part on standard output (a blank line after it) and writes it, with the line
    /// that says which run it is, to its file when there is a results directory.
    /// - Throws: `HarnessError` when the file cannot be written.
    public func finish() throws {
        let text = lines.joined(separator: "\n") + "\n"
        print(text)
        guard let directory = Self.environment("NOTIFYBUS_BENCH_RESULTS"), !directory.isEmpty else { return }
        let run = Self.environment("NOTIFYBUS_BENCH_RUN") ?? "a run by hand"
        let start = loadAtRunStart.withLock { $0 }.map { "\($0) as the run began, " } ?? ""
        let footer = "Measured \(Self.utcNow()): \(run); load average \(start)\(Self.loadAverage()) when this part was written."
        try writeFile(directory + "/" + name + ".md", text + "\n" + footer + "\n")
    }

    /// The first three fields of `/proc/loadavg`.
    static func loadAverage() -> String {
        (ProcessStats.readText("/proc/loadavg") ?? "").split(separator: " ").prefix(3).joined(separator: " ")
    }

    /// The time now in UTC, to the minute (`2026-12-05 07:12 UTC`).
    static func utcNow() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M UTC", &parts)
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
