// swift-tools-version: 6.1
import PackageDescription

// A package of its own, so `swift test` at the root never builds the benchmark tool.
/// One executable per benchmark suite, each in Benchmarks/<Name>/ (the layout the plugin expects).
let benchmarkTargets = [
    "SuspendedPublish",
    "ActivePublish",
    "Latency",
    "Flush",
    "Memory",
    "FanOut",
    "LargeObject",
    "Allocations",
]

let package = Package(
    name: "NotifyBusBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "NotifyBus", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: benchmarkTargets.map { name in
        .executableTarget(
            name: name,
            dependencies: [
                .product(name: "NotifyBus", package: "NotifyBus"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/\(name)",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    } + [
        // A plain loop over one scenario, to run under a profiler (valgrind --tool=callgrind, perf).
        .executableTarget(
            name: "Profile",
            dependencies: [.product(name: "NotifyBus", package: "NotifyBus")],
            path: "Profile"
        ),
        // The cost of one read of each clock a publish could stamp its events with, in C
        // (clock-cost.sh): what the publish benchmarks' analysis compares with.
        .executableTarget(name: "ClockCost", path: "ClockCost"),
    ],
    swiftLanguageModes: [.v6]
)
