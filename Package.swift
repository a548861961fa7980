// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "NotifyBus",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "NotifyBus", targets: ["NotifyBus"]),
        .library(name: "NotifyBusLog", targets: ["NotifyBusLog"]),
        .executable(name: "notifywatch", targets: ["notifywatch"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // The coalescing core: pure Swift, no C, no Foundation.
        .target(name: "NotifyBus"),
        // Event logs (CONTRACT.md §2): reader, writer, replayer on a virtual clock.
        .target(name: "NotifyBusLog", dependencies: ["NotifyBus"]),
        .executableTarget(
            name: "notifywatch",
            dependencies: [
                "NotifyBus", "NotifyBusLog", "NotifyBusSources", "EventLoop", "DBus",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Example programs build with the package so they cannot rot.
        .executableTarget(name: "AppLifecycleExample", dependencies: ["NotifyBus"], path: "Examples/AppLifecycle"),
        .executableTarget(
            name: "LiveAppExample", dependencies: ["NotifyBus", "NotifyBusSources", "EventLoop"],
            path: "Examples/LiveApp"),
        .testTarget(name: "NotifyBusTests", dependencies: ["NotifyBus"]),
        .testTarget(
            name: "NotifyBusLogTests",
            dependencies: ["NotifyBus", "NotifyBusLog"],
            exclude: ["Fixtures"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Targets of the system sources (udev, D-Bus) are appended below this line.


// udev power supplies (issue 3).
package.targets += [
    // libudev, through pkg-config (Debian/Ubuntu: libudev-dev).
    .systemLibrary(name: "CUdev", pkgConfig: "libudev", providers: [.apt(["libudev-dev"])]),
    // A thin Swift layer over libudev: context, enumerator, monitor, device. Owns lifetimes, hides C.
    .target(name: "Udev", dependencies: ["CUdev"]),
    // epoll, eventfd and timerfd (and prctl), which Swift's Glibc module does not export.
    .systemLibrary(name: "CEventLoop"),
    // An epoll event-loop thread that owns C objects that are not thread-safe (udev, D-Bus).
    .target(name: "EventLoop", dependencies: ["CEventLoop"]),
    // The system sources: power supplies from udev (D-Bus sources to follow).
    .target(name: "NotifyBusSources", dependencies: ["NotifyBus", "Udev", "EventLoop"]),
    .testTarget(name: "EventLoopTests", dependencies: ["EventLoop"]),
    // Test helper: runs PowerSupplySource in a child process, under umockdev's LD_PRELOAD.
    .executableTarget(
        name: "PowerSupplyProbe",
        dependencies: ["NotifyBus", "NotifyBusSources", "Udev", "EventLoop"],
        path: "Tests/PowerSupplyProbe"
    ),
    // Shared by the umockdev tests: child processes, the test bed (Fixtures/testbed.py), paths.
    .target(name: "TestSupport", dependencies: ["NotifyBus"], path: "Tests/TestSupport", exclude: ["Fixtures"]),
    // Real libudev against umockdev test beds (Debian: umockdev libumockdev-dev gir1.2-umockdev-1.0
    // python3-gi). The tests start PowerSupplyProbe under the preload; plain `swift test` runs them.
    .testTarget(
        name: "PowerSupplyTests",
        dependencies: ["NotifyBus", "NotifyBusSources", "PowerSupplyProbe", "TestSupport"]
    ),
    // The real notifywatch binary inside the umockdev sandbox: output, signals, recording, arguments.
    .testTarget(name: "NotifyWatchTests", dependencies: ["NotifyBus", "TestSupport", "notifywatch", "LiveAppExample"]),
]
package.products += [
    .library(name: "Udev", targets: ["Udev"]),
    .library(name: "EventLoop", targets: ["EventLoop"]),
    .library(name: "NotifyBusSources", targets: ["NotifyBusSources"]),
]

// D-Bus client and the sensor, locale and settings sources (issue 4).
package.targets += [
    // libdbus-1, through pkg-config (Debian/Ubuntu: libdbus-1-dev).
    .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
    // A Swift D-Bus client on libdbus, running on an EventLoopThread. Owns lifetimes, hides C.
    .target(name: "DBus", dependencies: ["CDBus", "EventLoop"]),
    // Test harness: private dbus-daemons, python-dbusmock services, child processes.
    .target(name: "DBusTestSupport", dependencies: ["DBus"], path: "Tests/DBusTestSupport", exclude: ["Fixtures"]),
    // The D-Bus client against private buses (dbus-daemon, python3-dbusmock).
    .testTarget(name: "DBusTests", dependencies: ["DBus", "DBusTestSupport", "EventLoop"]),
    // The sensor, locale and settings sources against python-dbusmock services and the real
    // iio-sensor-proxy under umockdev (Debian: dbus-daemon python3-dbusmock iio-sensor-proxy
    // umockdev gir1.2-umockdev-1.0 python3-gi), each test on its own private dbus-daemon.
    .testTarget(
        name: "DBusSourcesTests",
        dependencies: ["NotifyBus", "NotifyBusSources", "DBus", "DBusTestSupport", "EventLoop"],
        exclude: ["Fixtures"]
    ),
]
package.products += [
    .library(name: "DBus", targets: ["DBus"]),
]
// The D-Bus sources live in NotifyBusSources beside the power-supply source.
if let index = package.targets.firstIndex(where: { $0.name == "NotifyBusSources" }) {
    package.targets[index].dependencies.append("DBus")
}

// notifywatch against the real daemons (issues 4 and 5): the real iio-sensor-proxy on umockdev,
// the real systemd-localed in a private mount namespace, the real xdg-desktop-portal with its GTK
// backend and dconf on Xvfb, each on its own private bus (Debian: systemd iio-sensor-proxy
// xdg-desktop-portal xdg-desktop-portal-gtk xvfb dconf-service libglib2.0-bin; run as root).
package.targets += [
    .testTarget(
        name: "RealDaemonTests",
        dependencies: ["NotifyBus", "DBusTestSupport", "TestSupport", "notifywatch"]
    ),
]
