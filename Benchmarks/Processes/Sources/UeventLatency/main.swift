import Harness
import EpollLoop
import NotifyBus
import NotifyBusSources

#if canImport(Glibc)
import Glibc
#endif

// Latency from a uevent to a subscriber's callback, side by side with a bare libudev
// monitor receiving the same uevents under umockdev, in one process and one run.
//
// One umockdev test bed with one battery (BAT0), made in this process. Two receivers of the same
// uevents: a bare libudev monitor on its own thread (BareMonitor), and the full path,
// PowerSupplySource on an EventLoopThread → NotificationBus → a callback subscription on
// `battery/BAT0/state`. For each uevent the driver flips the battery's status (Charging ⇄
// Discharging: attribute and property, so the source publishes a change), takes CLOCK_MONOTONIC,
// calls umockdev_testbed_uevent, and waits until both receivers have recorded it.
//
//   UeventLatency [--events N] [--warmup N] [--gap-us N] [--control] [--csv FILE] [--stages]

let preload = "libumockdev-preload.so.0"

/// The process must run under umockdev's preload from its first instruction: re-executes itself
/// with it when it is missing.
func ensurePreload() {
    let current = getenv("LD_PRELOAD").map { String(cString: $0) } ?? ""
    if current.contains("libumockdev-preload") { return }
    setenv("LD_PRELOAD", current.isEmpty ? preload : "\(preload):\(current)", 1)
    var argv = CommandLine.arguments.map { strdup($0) } + [nil]
    execv("/proc/self/exe", &argv)
    log("cannot re-execute under \(preload): errno \(errno)")
    exit(2)
}

struct Options {
    var events = 2000
    var warmup = 100
    var gapMicroseconds: UInt32 = 1000
    var control = false
    var csv: String?
    var stages = false

    init(_ arguments: ArraySlice<String>) {
        var arguments = arguments
        while let argument = arguments.popFirst() {
            switch argument {
            case "--events": events = arguments.popFirst().flatMap { Int($0) } ?? events
            case "--warmup": warmup = arguments.popFirst().flatMap { Int($0) } ?? warmup
            case "--gap-us": gapMicroseconds = arguments.popFirst().flatMap { UInt32($0) } ?? gapMicroseconds
            case "--control": control = true
            case "--csv": csv = arguments.popFirst()
            case "--stages": stages = true
            default:
                log("usage: UeventLatency [--events N] [--warmup N] [--gap-us N] [--control] [--csv FILE] [--stages]")
                exit(2)
            }
        }
    }
}

/// Writes a line to standard error.
func log(_ text: String) {
    var line = "UeventLatency: \(text)\n"
    line.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

ensurePreload()
ReportPart.runBegins()
let options = Options(CommandLine.arguments.dropFirst())

// The test bed first: it sets UMOCKDEV_DIR, which every libudev context made later reads.
let testbed = Testbed()
let battery = testbed.addDevice(
    subsystem: "power_supply", name: "BAT0",
    attributes: [("type", "Battery"), ("present", "1"), ("status", "Discharging"), ("capacity", "80")],
    properties: [("POWER_SUPPLY_TYPE", "Battery"), ("POWER_SUPPLY_PRESENT", "1"),
                 ("POWER_SUPPLY_STATUS", "Discharging"), ("POWER_SUPPLY_CAPACITY", "80")])

if options.stages {
    var part = ReportPart("uevent-latency-stages")
    part.line(try measureStages(testbed: testbed, battery: battery, count: options.events + 50))
    try part.finish()
    exit(0)
}

let total = options.warmup + options.events
let recorder = Recorder(capacity: total, control: options.control)

// The full path: source on its own loop thread, bus, callback subscriber.
let bus = NotificationBus()
let loop = try SourceLoop(name: "power-supply")
let source = PowerSupplySource(bus: bus, loop: loop, configuration: .init(rereadInterval: nil))
let subscription = bus.subscribe(["battery/BAT0/state"]) { event in
    let time = UInt64(monotonicNanoseconds())
    guard case .notification(let notification) = event, notification.kind == .live else { return }
    recorder.record(.bus, at: time, state: notification.value.stringValue ?? "")
}
let sourceTask = Task { try await source.run() }
for await status in source.statusUpdates() {
    if status == .running { break }
    if case .failed = status { log("source failed: \(status)"); exit(1) }
}
guard bus.value(forKey: "battery/BAT0/state") == "unplugged" else {
    log("the source did not publish BAT0's state: \(String(describing: bus.value(forKey: "battery/BAT0/state")))")
    exit(1)
}

// The anchor(s).
var bare = try BareMonitor(recorder: recorder, role: .bare)
let control = options.control ? try BareMonitor(recorder: recorder, role: .control) : nil

/// The receivers in the order umockdev's sender serves their sockets.
@MainActor func servingOrder() -> [String] {
    testbed.socketOrder.map { fd -> String in
        if fd == bare.fileDescriptor { return "bare" }
        if fd == control?.fileDescriptor { return "control" }
        return "bus"
    }
}

/// Whether the sender serves the bare monitor's socket before the source's.
@MainActor func isBareServedFirst() -> Bool {
    let order = servingOrder()
    return (order.firstIndex(of: "bare") ?? 0) < (order.firstIndex(of: "bus") ?? 0)
}

/// Replaces the bare monitor until the sender serves it in the other place relative to the
/// source's socket. The order is the directory order of the sockets `$UMOCKDEV_DIR/event<fd>`,
/// so a new monitor on another descriptor number (lower numbers held by placeholders) lands
/// elsewhere in it.
var placeholders: [Int32] = []
@MainActor func flipServingOrder() throws -> Bool {
    let wanted = !isBareServedFirst()
    for _ in 0..<64 {
        let old = bare.fileDescriptor
        bare.stop()
        unlink("\(testbed.root)/event\(old)")  // in case the preload left the socket file behind
        // A placeholder on a directory (not /dev: the preload tracks /dev descriptors in a small table).
        placeholders.append(open(testbed.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC))
        bare = try BareMonitor(recorder: recorder, role: .bare)
        if isBareServedFirst() == wanted { return true }
    }
    return false
}

// The driver: two halves, the bare monitor's socket served first in one and second in the other,
// because the uevent sender serves sockets one after the other and the first served wins
// (measured with --control: ~10–15 µs per place on 2 cores).
var lost = 0
var orders: [[String]] = []
for phase in 0..<2 {
    if phase == 1, !(try flipServingOrder()) {
        log("could not change the order in which umockdev serves the sockets; both halves have the same")
    }
    orders.append(servingOrder())
    log("half \(phase + 1): uevent sockets served in this order: \(orders[phase].joined(separator: ", "))")
    let events = phase == 0 ? options.events / 2 : options.events - options.events / 2
    for index in 0..<(options.warmup + events) {
        let status = index % 2 == 0 ? "Charging" : "Discharging"
        testbed.setAttribute(battery, "status", status)
        testbed.setProperty(battery, "POWER_SUPPLY_STATUS", status)
        usleep(options.gapMicroseconds)
        recorder.begin(
            expected: PowerSupplyReading.state(forStatus: status), phase: phase, warmup: index < options.warmup,
            sent: UInt64(monotonicNanoseconds()))
        testbed.uevent(battery, action: "change")
        usleep(500)
        let deadline = UInt64(monotonicNanoseconds()) + 1_000_000_000
        while !recorder.isComplete && UInt64(monotonicNanoseconds()) < deadline { usleep(100) }
        if !recorder.isComplete { lost += 1 }
        recorder.end()
    }
}

bare.stop()
control?.stop()
for placeholder in placeholders { close(placeholder) }
sourceTask.cancel()
try? await sourceTask.value
subscription.cancel()
await loop.shutdown()

let samples = recorder.samples.filter { !$0.warmup }
let report = Report(samples: samples, orders: orders, lost: lost, control: options.control, warmup: options.warmup)
if let csv = options.csv { report.writeCSV(to: csv) }
var part = ReportPart("uevent-latency")
part.line(report.markdown)
try part.finish()
if report.mismatches > 0 || lost > 0 {
    log("\(lost) uevents not received by every receiver within 1 s; \(report.mismatches) carried an unexpected state")
}
