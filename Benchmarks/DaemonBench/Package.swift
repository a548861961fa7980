// swift-tools-version: 6.1
import PackageDescription

// notifybusd measured side by side with its anchors in one run: a frozen subscriber's catch-up
// (through the daemon vs a raw D-Bus subscriber), live latency, fan-out to 100 connections (vs a
// raw sender of the same unicast signals, and vs a broadcast), live latency and memory under the
// hostile clients of the specification's D-Bus interface article (vs the same subscriber with no attacker), and the daemon's
// idle cost and memory. Every client, on both sides, is the same few lines of raw
// libdbus, so the differences are the daemon's. A package of its own (like Benchmarks/), so
// neither the root `swift test` nor the ordo-one suites build it. Run it through
// Benchmarks/daemon-bench.sh and scripts/measure-idle-daemon.
let package = Package(
    name: "DaemonBench",
    products: [
        // The raw libdbus client the daemon's benchmarks share (this package's and LifecycleBench),
        // and their way of starting a child process.
        .library(name: "BenchDBus", targets: ["BenchDBus"]),
    ],
    dependencies: [.package(path: "../../Packages/ChildProcess")],
    targets: [
        .systemLibrary(name: "CDBusRaw", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        // A connection, messages and values of raw libdbus, a portal stand-in on them, and
        // `ChildProcess.start` with the benchmarks' error.
        .target(name: "BenchDBus", dependencies: ["CDBusRaw", .product(name: "ChildProcess", package: "ChildProcess")]),
        .executableTarget(name: "DaemonBench", dependencies: ["BenchDBus", "CDBusRaw", .product(name: "ChildProcess", package: "ChildProcess")]),
    ],
    swiftLanguageModes: [.v6]
)
