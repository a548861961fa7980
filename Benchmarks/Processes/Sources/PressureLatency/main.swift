import Harness
import NotifyBus
import NotifyBusSources
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

// Latency from a PSI memory-pressure trigger to a subscriber's callback, side by side with a bare
// C program polling the same trigger on the same file, under real pressure.
//
// One cgroup2 group (PressureGroup) whose memory.pressure two receivers watch at the same time: the
// bare anchor, `pressure-poll poll` (a C program: "some 100000 2000000" armed, poll() for
// POLLPRI), and the full path in this process, MemoryPressureSource on its SourceLoop →
// NotificationBus → a callback subscription on `memory/pressure`. For each sample a memory hog
// (`pressure-poll hog`) joins the group and takes CLOCK_MONOTONIC (T0) before its first touch;
// the anchor's wake-up (T_c) and the callback's `warning` (or `critical`) (T_n) are taken on the
// same clock. The hog is stopped once both have seen the trigger, and the next sample waits for
// the source's return to `normal` (10 s after the last trigger): about 13 s a sample. The kernel
// wakes the triggers of a group in an order of their own, so the run has two halves: in the first
// the anchor's trigger is armed after the source's, in the second the source's after the anchor's.
//
//   PressureLatency [--samples N] [--csv FILE]     (as root)

/// Writes a line to standard error.
func log(_ text: String) {
    var line = "PressureLatency: \(text)\n"
    line.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

struct Options {
    var samples = 8
    var csv: String?

    init(_ arguments: ArraySlice<String>) {
        var arguments = arguments
        while let argument = arguments.popFirst() {
            switch argument {
            case "--samples": samples = arguments.popFirst().flatMap { Int($0) } ?? samples
            case "--csv": csv = arguments.popFirst()
            default:
                log("usage: PressureLatency [--samples N] [--csv FILE]")
                exit(2)
            }
        }
    }
}

/// Every value the subscriber received, with the time its callback ran.
final class Arrivals: Sendable {
    private let values = Mutex<[(value: String, time: UInt64)]>([])

    func record(_ value: String, at time: UInt64) {
        values.withLock { $0.append((value, time)) }
    }

    /// The first value after `time` that `matches`.
    func first(after time: UInt64, _ matches: (String) -> Bool) -> (value: String, time: UInt64)? {
        values.withLock { $0.first { $0.time > time && matches($0.value) } }
    }
}

/// The times of one sample (CLOCK_MONOTONIC ns; 0 where it did not happen).
struct Sample {
    var half = 0
    /// The hog joined the group and is about to touch its first page.
    var start: UInt64 = 0
    /// The bare C program's first wake-up.
    var bare: UInt64 = 0
    /// The subscriber's callback with the first raised level.
    var bus: UInt64 = 0
    var level = ""
    /// The bare program's wake-ups in the sample (the hog runs on until both have seen one).
    var bareWakes: [UInt64] = []
    /// The subscriber's `normal` after the raise.
    var normal: UInt64 = 0

    var isComplete: Bool { bare != 0 && bus != 0 }
}

ReportPart.runBegins()
let options = Options(CommandLine.arguments.dropFirst())
var executable = [CChar](repeating: 0, count: 4096)
let length = readlink("/proc/self/exe", &executable, executable.count - 1)
let binary = length > 0 ? String(decoding: executable[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
let pollProgram = String(binary[..<(binary.lastIndex(of: "/") ?? binary.startIndex)]) + "/pressure-poll"

let groups: PressureGroup
do { groups = try PressureGroup() } catch {
    log("\(error)")
    exit(1)
}
let dataFile = groups.directory + "/data"

let bus = NotificationBus()
let arrivals = Arrivals()
let subscription = bus.subscribe(["memory/pressure"]) { event in
    let time = UInt64(monotonicNanoseconds())
    if let value = event.notification?.value.stringValue { arrivals.record(value, at: time) }
}
let loop: SourceLoop
do { loop = try SourceLoop(name: "memory") } catch {
    log("cannot start the source loop: \(error)")
    groups.cleanUp()
    exit(1)
}

/// Starts a memory source on the group's file and waits until it runs.
@MainActor func startSource() async throws -> Task<Void, any Error> {
    let source = MemoryPressureSource(bus: bus, loop: loop, configuration: .init(path: groups.pressureFile))
    let task = Task { try await source.run() }
    for await status in source.statusUpdates() {
        if status == .running { break }
        if case .unavailable = status { throw HarnessError("the memory source is unavailable: \(status)") }
        if case .failed = status { throw HarnessError("the memory source failed: \(status)") }
    }
    return task
}

/// The bare C program's wake-up times that arrived within about `milliseconds`.
@MainActor func bareWakes(_ poller: ChildProcess, within milliseconds: Int) throws -> [UInt64] {
    var wakes: [UInt64] = []
    var timeout = milliseconds
    while let line = poller.readLine(timeout: .milliseconds(timeout)) {
        if line == "error" { throw HarnessError("the bare program's trigger reports an error") }
        if line.hasPrefix("some "), let time = UInt64(line.dropFirst(5)) { wakes.append(time) }
        timeout = 0
    }
    return wakes
}

/// One sample: the hog started in the group, both receivers' first wake-ups, the return to normal.
@MainActor func measure(half: Int, poller: ChildProcess) throws -> Sample {
    var sample = Sample(half: half)
    let hog = try ChildProcess(executable: pollProgram, arguments: ["hog", dataFile] + groups.procsFiles)
    defer { hog.terminate() }
    guard hog.readLine(timeout: .seconds(60)) == "ready" else { throw HarnessError("the hog did not get ready") }
    _ = try bareWakes(poller, within: 10)
    let mark = UInt64(monotonicNanoseconds())
    hog.send("go")
    guard let loading = hog.readLine(timeout: .seconds(10)), loading.hasPrefix("loading "),
          let start = UInt64(loading.dropFirst(8))
    else { throw HarnessError("the hog did not start loading") }
    sample.start = start
    // Until both have seen the trigger (20 s at most: it comes 1.5–2.1 s in).
    let deadline = UInt64(monotonicNanoseconds()) + 20_000_000_000
    while UInt64(monotonicNanoseconds()) < deadline {
        sample.bareWakes += try bareWakes(poller, within: 10)
        if let raised = arrivals.first(after: mark, { $0 != "normal" }) {
            sample.bus = raised.time
            sample.level = raised.value
            if !sample.bareWakes.isEmpty { break }
        }
    }
    hog.terminate()
    sample.bare = sample.bareWakes.first ?? 0
    guard sample.bus != 0 else { return sample }
    // The return to normal, 10 s after the last trigger (the last comes up to ~1 s after the hog stops).
    let back = UInt64(monotonicNanoseconds()) + 25_000_000_000
    while UInt64(monotonicNanoseconds()) < back {
        sample.bareWakes += try bareWakes(poller, within: 50)
        if let normal = arrivals.first(after: sample.bus, { $0 == "normal" }) {
            sample.normal = normal.time
            break
        }
    }
    sample.bareWakes += try bareWakes(poller, within: 500)
    return sample
}

/// The whole run: both halves, then the source stopped.
@MainActor func run() async throws -> [Sample] {
    var samples: [Sample] = []
    var sourceTask = try await startSource()
    let poller = try ChildProcess(executable: pollProgram, arguments: ["poll", groups.pressureFile])
    defer { poller.terminate() }
    guard poller.readLine(timeout: .seconds(10)) == "armed" else { throw HarnessError("the bare program did not arm its trigger") }
    let firstHalf = (options.samples + 1) / 2
    for index in 0..<options.samples {
        let half = index < firstHalf ? 0 : 1
        if index == firstHalf {
            // The source's triggers armed again, after the anchor's.
            sourceTask.cancel()
            try? await sourceTask.value
            sourceTask = try await startSource()
        }
        do {
            let sample = try measure(half: half, poller: poller)
            samples.append(sample)
            log("sample \(index + 1)/\(options.samples) (half \(half + 1)): " + (sample.isComplete
                ? "bare \(format(Double(sample.bare &- sample.start) / 1e6, 1)) ms, bus \(format(Double(sample.bus &- sample.start) / 1e6, 1)) ms (\(sample.level)), bus − bare \(format((Double(sample.bus) - Double(sample.bare)) / 1e3, 1)) µs"
                : "missed (bare \(sample.bare != 0), bus \(sample.bus != 0))"))
        } catch {
            log("sample \(index + 1): \(error)")
            samples.append(Sample(half: half))
        }
        usleep(500_000)
    }
    sourceTask.cancel()
    try? await sourceTask.value
    return samples
}

log("pressure file \(groups.pressureFile); \(options.samples) samples of about 13 s each")
log("load average at start: \(loadAverage())")
let samples: [Sample]
do { samples = try await run() } catch {
    log("\(error)")
    groups.cleanUp()
    exit(1)
}
let loadAtEnd = loadAverage()
subscription.cancel()
await loop.shutdown()
groups.cleanUp()

let report = Report(samples: samples, loadAverage: loadAtEnd)
if let csv = options.csv { report.writeCSV(to: csv) }
var part = ReportPart("pressure-latency")
part.line(report.markdown)
try part.finish()

/// The first three fields of /proc/loadavg.
func loadAverage() -> String {
    guard let file = fopen("/proc/loadavg", "r") else { return "?" }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 128)
    guard fgets(&line, Int32(line.count), file) != nil else { return "?" }
    let bytes = line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    return String(decoding: bytes, as: UTF8.self).split(separator: " ").prefix(3).joined(separator: " ")
}
