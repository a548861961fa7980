// swift-tools-version: 6.1
import PackageDescription

// The measurements that drive real processes, each side by side with its anchor in one run, one
// executable per measurement (Benchmarks/README.md has the method of each, Benchmarks/results the
// latest tables), on one support target and the harness the tests use (Packages/Harness):
//   DaemonBench     notifybusd: a frozen subscriber's catch-up, live latency, fan-out, hostile
//                   clients, idle cost (daemon-bench.sh, thaw-trace.sh, scripts/measure-idle-daemon)
//   LifecycleBench  notifybusd --freeze-background on a headless sway and a headless phoc, and with a
//                   real systemd user manager; FocusThaw, its bare C anchor on sway (lifecycle-bench.sh)
//   MQTTBench       the MQTT link against a libmosquitto publish per event (mqtt-bench.sh)
//   PressureLatency a PSI trigger → a subscriber, against pressure-poll, a bare C poll (pressure-latency.sh)
//   UeventLatency   a uevent → a subscriber, against a bare libudev monitor under umockdev (uevent-latency.sh)
//   DBusLatency     a D-Bus signal → a subscriber, against a bare libdbus client (dbus-latency.sh)
// A package of its own, so neither the root `swift test` nor the in-process suites (Benchmarks/)
// build it; scripts/test builds it.
let harness = Target.Dependency.product(name: "Harness", package: "Harness")
/// A product of the root package.
func notifyBus(_ names: String...) -> [Target.Dependency] { names.map { .product(name: $0, package: "NotifyBus") } }

let package = Package(
    name: "ProcessBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "NotifyBus", path: "../.."),
        .package(name: "Harness", path: "../../Packages/Harness"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // libdbus, for the clients on both sides of a comparison (the same few raw lines, so that a
        // difference is the daemon's), and libumockdev (a fake /sys and its uevent sender).
        .systemLibrary(name: "CDBusRaw", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(name: "CUmockdev", pkgConfig: "umockdev-1.0", providers: [.apt(["libumockdev-dev"])]),
        // What the measurements share: a raw libdbus connection, messages and values, the XDG portal's
        // Settings served by the benchmark itself, notifybusd on a private bus, command-line options,
        // cgroups and inotify on their files.
        .target(name: "BenchSupport", dependencies: ["CDBusRaw", harness]),
        .executableTarget(name: "DaemonBench", dependencies: ["BenchSupport", "CDBusRaw", harness]),
        .executableTarget(
            name: "LifecycleBench",
            dependencies: ["BenchSupport", harness] + notifyBus("NotifyBus")),
        // The anchor of focus → thawed on sway: sway's `window` event → `write(cgroup.freeze, "0")`.
        .executableTarget(name: "FocusThaw"),
        .executableTarget(
            name: "MQTTBench",
            dependencies: ["BenchSupport", harness, .product(name: "Logging", package: "swift-log")]
                + notifyBus("NotifyBus", "_NotifyBusMQTT", "_Mosquitto", "_EpollLoop", "_SystemSupport")),
        // The anchor of PSI trigger → subscriber (`poll`: one trigger, poll() for POLLPRI), and the
        // memory hog (`hog`), in C.
        .executableTarget(name: "pressure-poll"),
        .executableTarget(
            name: "PressureLatency",
            dependencies: ["BenchSupport", harness] + notifyBus("NotifyBus", "NotifyBusSources")),
        .executableTarget(
            name: "UeventLatency",
            dependencies: ["BenchSupport", "CUmockdev", harness] + notifyBus("NotifyBus", "NotifyBusSources", "_Udev", "_EpollLoop")),
        .executableTarget(
            name: "DBusLatency",
            dependencies: ["BenchSupport", "CDBusRaw", harness] + notifyBus("DBus", "_EpollLoop", "NotifyBus")),
    ],
    swiftLanguageModes: [.v6]
)
