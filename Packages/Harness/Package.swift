// swift-tools-version: 6.1
import PackageDescription

// The harness the tests (Tests/TestSupport) and the benchmark package (Benchmarks/Processes)
// share: child processes (posix_spawn; lines in and out, files, signals, waits) and what /proc
// says about a process; a private dbus-daemon; app scopes in a private cgroup tree; headless
// compositors with real windows (sway, phoc, KWin) and the tests' own Wayland client; a real
// systemd user manager; a Mosquitto broker; and samples with their percentiles and report lines.
// Linux only. It names the root package's `DBus` and `NotifyBus` products (the root package
// builds these same sources as a target of its own, so it never depends on this package).
// Nothing that scripts/install or the Debian package ships depends on it.
let package = Package(
    name: "Harness",
    products: [
        .library(name: "Harness", targets: ["Harness"]),
    ],
    dependencies: [.package(name: "NotifyBus", path: "../..")],
    targets: [
        .target(
            name: "Harness",
            dependencies: [.product(name: "DBus", package: "NotifyBus"), .product(name: "NotifyBus", package: "NotifyBus")]),
    ],
    swiftLanguageModes: [.v6]
)

// As the root package's targets: explicit existentials, and imports that say what a file uses.
for target in package.targets {
    target.swiftSettings = [.enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility")]
}
