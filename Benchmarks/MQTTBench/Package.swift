// swift-tools-version: 6.1
import PackageDescription

// The MQTT link measured side by side with its anchor, a plain libmosquitto publisher that sends
// every event (what `mosquitto_pub` per event, or any client publishing each change, sends), in
// one run against a real Mosquitto broker: an outage of 10 keys × 1,000 changes, live latency,
// 100 simulated hosts, 100 hosts × 1,000 changes per key watched by `notifywatch --mqtt`, and
// the link's wake-ups idle. A package of its own, so the root
// `swift test` never builds it. Run it through Benchmarks/mqtt-bench.sh.
let package = Package(
    name: "MQTTBench",
    dependencies: [
        .package(name: "NotifyBus", path: "../.."),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(path: "../../Packages/ChildProcess"),
    ],
    targets: [
        .executableTarget(
            name: "MQTTBench",
            dependencies: [
                .product(name: "NotifyBus", package: "NotifyBus"),
                .product(name: "_NotifyBusMQTT", package: "NotifyBus"),
                .product(name: "_Mosquitto", package: "NotifyBus"),
                .product(name: "_EpollLoop", package: "NotifyBus"),
                .product(name: "_SystemSupport", package: "NotifyBus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ChildProcess", package: "ChildProcess"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
