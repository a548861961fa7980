// swift-tools-version: 6.1
import PackageDescription

// notifybusd's app lifecycle (`--freeze-background`) measured side by side with its anchors in
// one run, against a headless sway with foot windows in app scopes of a private cgroup tree:
// focus → the app's cgroup thawed (vs FocusThaw, a bare C program that reads the same sway event
// and writes `cgroup.freeze` itself), focus → a frozen app's subscriber has every current value
// (vs the same app kept running through every event), what a busy background app costs frozen
// and not, and the daemon's idle wake-ups and memory with the policy on (vs the same daemon
// without it). A package of its own, so the root `swift test` never builds it. Run it through
// Benchmarks/lifecycle-bench.sh.
let package = Package(
    name: "LifecycleBench",
    dependencies: [
        .package(name: "NotifyBus", path: "../.."),
        .package(name: "DaemonBench", path: "../DaemonBench"),
        .package(path: "../../Packages/ChildProcess"),
    ],
    targets: [
        .executableTarget(
            name: "LifecycleBench",
            dependencies: [
                .product(name: "BenchDBus", package: "DaemonBench"), .product(name: "NotifyBus", package: "NotifyBus"),
                .product(name: "ChildProcess", package: "ChildProcess"),
            ]),
        .executableTarget(name: "FocusThaw"),
    ],
    swiftLanguageModes: [.v6]
)
