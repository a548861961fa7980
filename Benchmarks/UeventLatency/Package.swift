// swift-tools-version: 6.1
import PackageDescription

// Latency from a uevent to a subscriber's callback, side by side with a bare libudev
// monitor receiving the same uevents under umockdev, in one process and one run.
// A package of its own (like Benchmarks/), so neither the root `swift test` nor the ordo-one
// suites build it. Run it through Benchmarks/uevent-latency.sh.
let package = Package(
    name: "UeventLatency",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "NotifyBus", path: "../.."),
    ],
    targets: [
        // libumockdev: the test bed (a fake /sys) and its uevent sender, in this process.
        .systemLibrary(name: "CUmockdev", pkgConfig: "umockdev-1.0", providers: [.apt(["libumockdev-dev"])]),
        .executableTarget(
            name: "UeventLatency",
            dependencies: [
                "CUmockdev",
                .product(name: "NotifyBus", package: "NotifyBus"),
                .product(name: "NotifyBusSources", package: "NotifyBus"),
                .product(name: "_Udev", package: "NotifyBus"),
                .product(name: "_EpollLoop", package: "NotifyBus"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
