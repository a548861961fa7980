// swift-tools-version: 6.1
// D-Bus signal → subscriber latency: NotifyBus (DBusConnection → NotificationBus → an async
// subscriber) side by side with a bare libdbus client receiving the same signals on the same
// private bus in the same run. Run: `swift run -c release --package-path Benchmarks/DBusLatency`.
import PackageDescription

let package = Package(
    name: "DBusLatency",
    dependencies: [.package(name: "NotifyBus", path: "../.."), .package(path: "../../Packages/ChildProcess")],
    targets: [
        .systemLibrary(name: "CDBusBare", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        .executableTarget(
            name: "DBusLatency",
            dependencies: [
                "CDBusBare",
                .product(name: "DBus", package: "NotifyBus"),
                .product(name: "_EpollLoop", package: "NotifyBus"),
                .product(name: "NotifyBus", package: "NotifyBus"),
                .product(name: "ChildProcess", package: "ChildProcess"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
