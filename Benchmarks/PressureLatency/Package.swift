// swift-tools-version: 6.1
import PackageDescription

// Latency from a PSI memory-pressure trigger to a subscriber's callback, side by side with a bare C
// program polling the same trigger on the same pressure file, under real pressure in a cgroup.
// A package of its own (like Benchmarks/), so neither the root `swift test` nor the ordo-one
// suites build it. Run it through Benchmarks/pressure-latency.sh (as root: it mounts cgroups).
let package = Package(
    name: "PressureLatency",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "NotifyBus", path: "../.."),
        .package(path: "../../Packages/ChildProcess"),
    ],
    targets: [
        // The anchor (`poll`: one PSI trigger, poll() for POLLPRI) and the memory hog (`hog`), in C.
        .executableTarget(name: "pressure-poll"),
        .executableTarget(
            name: "PressureLatency",
            dependencies: [
                .product(name: "NotifyBus", package: "NotifyBus"),
                .product(name: "NotifyBusSources", package: "NotifyBus"),
                .product(name: "ChildProcess", package: "ChildProcess"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
