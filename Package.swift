// swift-tools-version: 6.1
import PackageDescription

// NotifyBus, by layer, from the portable core up to the Linux tools:
//
//   core            NotifyBus           the coalescing bus: pure Swift, no C, no Foundation
//   formats         NotifyBusLog        event logs (specification: Event log format): read, write, replay
//   C shims         CUdev, CDBus, CEpollLoop, CConcurrencyHook, CMosquitto, CWaylandClient,
//                   CForeignToplevel (the wlr foreign-toplevel protocol's interface description),
//                   CPlasmaWindowManagement (KDE's plasma-window-management protocol's)
//   system wrappers Udev, DBus, EpollLoop, Mosquitto, Wayland   each owns its C objects; no C above them
//                   LoopExecutor        Swift concurrency's global executor on EpollLoop's loop threads
//   system helpers  SystemSupport       the C library calls the layers above share: small files,
//                                       inotify, cgroups, wall time and RFC 3339, signals, logging to stderr
//   sources         SourceFramework     the shape every source shares (`NotifyBusSource`, its status, its loop)
//                   NotifyBusSources    udev and D-Bus sources, each a `Service`
//   fleet           NotifyBusMQTT       the bus on MQTT (specification: Publishing a fleet to MQTT)
//   app lifecycle   NotifyBusLifecycle  background apps frozen and woken (specification: Freezing background apps)
//   daemon          NotifyBusProtocol   notifybusd's D-Bus interface (specification: D-Bus interface), both sides
//                   NotifyBusDaemon     the bus as a D-Bus service, following subscribers' lives
//                   NotifyBusClient     an app's subscriptions through notifybusd
//   tools           NotifyBusCommandLine the option groups notifywatch and notifybusd share (no product)
//                   notifywatch, notifybusd, examples
//   tests           one target per layer, with shared support for child processes, private
//                   buses and umockdev test beds
//
// The core and the log format build wherever Swift 6 does (macOS 15 for `Synchronization`);
// everything from the C shims up is Linux only (epoll, libudev, libdbus).
let package = Package(
    name: "NotifyBus",
    platforms: [.macOS(.v15)],
    // The library products are the modules an app imports, and what their API names: the bus,
    // event logs, the sources, the daemon's client, and DBus (its addresses, names, values and
    // errors). Every other module's declarations are `package`: the programs' own.
    products: [
        .library(name: "NotifyBus", targets: ["NotifyBus"]),
        .library(name: "NotifyBusLog", targets: ["NotifyBusLog"]),
        .library(name: "NotifyBusSources", targets: ["NotifyBusSources"]),
        .library(name: "NotifyBusClient", targets: ["NotifyBusClient"]),
        .library(name: "DBus", targets: ["DBus"]),
        .executable(name: "notifywatch", targets: ["notifywatch"]),
        .executable(name: "notifybusd", targets: ["notifybusd"]),
        // Not for apps (an underscore, as swift-nio's `_NIOConcurrency`): what the benchmark
        // packages of Benchmarks/ reach of the programs' modules, with no promise of a stable API.
        // Only what those packages use is `public` there.
        .library(name: "_EpollLoop", targets: ["EpollLoop"]),
        .library(name: "_Udev", targets: ["Udev"]),
        .library(name: "_Mosquitto", targets: ["Mosquitto"]),
        .library(name: "_SystemSupport", targets: ["SystemSupport"]),
        .library(name: "_NotifyBusMQTT", targets: ["NotifyBusMQTT"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // Core. Its only dependency: OrderedDictionary, for JSON objects.
        .target(name: "NotifyBus", dependencies: [.product(name: "OrderedCollections", package: "swift-collections")]),

        // Formats.
        .target(name: "NotifyBusLog", dependencies: ["NotifyBus"]),

        // C shims, through pkg-config (Debian/Ubuntu: libudev-dev, libdbus-1-dev), and the
        // epoll, eventfd and timerfd calls that Glibc does not export.
        .systemLibrary(name: "CUdev", pkgConfig: "libudev", providers: [.apt(["libudev-dev"])]),
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(name: "CEpollLoop"),
        // libmosquitto (libmosquitto-dev to build, libmosquitto1 to run).
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        // libwayland-client (libwayland-dev to build, libwayland-client0 to run), and the
        // zwlr_foreign_toplevel_manager_v1 protocol's interface description on it.
        .systemLibrary(name: "CWaylandClient", pkgConfig: "wayland-client", providers: [.apt(["libwayland-dev"])]),
        .target(name: "CForeignToplevel", dependencies: ["CWaylandClient"]),
        // KDE's org_kde_plasma_window_management protocol's interface description on it.
        .target(name: "CPlasmaWindowManagement", dependencies: ["CWaylandClient"]),
        // Sets the Swift runtime's global-enqueue hooks (delays included) by their addresses (also
        // where the runtime is linked statically and does not export them).
        .target(name: "CConcurrencyHook"),

        // System wrappers.
        .target(name: "EpollLoop", dependencies: ["CEpollLoop", .product(name: "HeapModule", package: "swift-collections")]),
        .target(name: "Udev", dependencies: ["CUdev"]),
        .target(name: "DBus", dependencies: ["CDBus", "EpollLoop"]),
        .target(name: "Mosquitto", dependencies: ["CMosquitto", "EpollLoop"]),
        .target(name: "Wayland", dependencies: ["CWaylandClient", "CForeignToplevel", "CPlasmaWindowManagement", "EpollLoop"]),
        .target(name: "LoopExecutor", dependencies: ["CConcurrencyHook", "EpollLoop"]),

        // System helpers: the C library calls the sources, the daemon and the tools share.
        .target(name: "SystemSupport", dependencies: ["EpollLoop", .product(name: "Logging", package: "swift-log")]),

        // Sources. The shape every source shares (the built-in ones, the MQTT link, the lifecycle):
        // `NotifyBusSource`, its status, its loop, its run until cancelled.
        .target(
            name: "SourceFramework",
            dependencies: [
                "NotifyBus", "EpollLoop", "SystemSupport",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        .target(
            name: "NotifyBusSources",
            dependencies: [
                "NotifyBus", "SourceFramework", "Udev", "DBus", "EpollLoop", "SystemSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        // The fleet: the link as one more subscriber of the bus, and the fleet watcher.
        .target(
            name: "NotifyBusMQTT",
            dependencies: [
                "NotifyBus", "SourceFramework", "SystemSupport", "Mosquitto", "EpollLoop",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "OrderedCollections", package: "swift-collections"),
            ]),

        // The app lifecycle: the policy, the window backends (sway's IPC, the wlr protocol), the
        // freezer, media players.
        .target(
            name: "NotifyBusLifecycle",
            dependencies: [
                "NotifyBus", "SourceFramework", "NotifyBusProtocol", "DBus", "EpollLoop", "SystemSupport", "Wayland",
                .product(name: "Logging", package: "swift-log"),
            ]),

        // Daemon.
        .target(name: "NotifyBusProtocol", dependencies: ["NotifyBus", "DBus", "SystemSupport"]),
        .target(
            name: "NotifyBusDaemon",
            dependencies: [
                "NotifyBus", "NotifyBusProtocol", "SourceFramework", "NotifyBusSources", "NotifyBusMQTT", "NotifyBusLifecycle", "DBus",
                "EpollLoop", "SystemSupport", .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(name: "NotifyBusClient", dependencies: ["NotifyBus", "NotifyBusProtocol", "DBus", "EpollLoop", "SystemSupport"]),

        // Tools. The examples build with the package so that they cannot rot.
        // The sources', the buses' and the MQTT broker's option groups of both programs; no product,
        // so an app that uses the library modules does not link swift-argument-parser through them.
        .target(
            name: "NotifyBusCommandLine",
            dependencies: ["DBus", "NotifyBusMQTT", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        .executableTarget(
            name: "notifywatch",
            dependencies: [
                "NotifyBus", "NotifyBusLog", "NotifyBusSources", "NotifyBusClient", "NotifyBusProtocol", "DBus", "EpollLoop",
                "SystemSupport", "LoopExecutor", "NotifyBusMQTT", "NotifyBusCommandLine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "notifybusd",
            dependencies: [
                "NotifyBusDaemon", "NotifyBusSources", "NotifyBusMQTT", "NotifyBusLifecycle", "DBus", "EpollLoop",
                "SystemSupport", "LoopExecutor", "NotifyBusCommandLine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(name: "AppLifecycleExample", dependencies: ["NotifyBus"], path: "Examples/AppLifecycle"),
        .executableTarget(
            name: "LiveAppExample", dependencies: ["NotifyBus", "NotifyBusSources"], path: "Examples/LiveApp"),
        .executableTarget(name: "BackgroundTaskExample", dependencies: ["NotifyBusClient", "DBus"], path: "Examples/BackgroundTask"),

        // Tests. Debian packages they need: scripts/system-packages.txt.
        // The harness the tests share with the benchmarks, the sources of Packages/Harness (a package
        // of its own for the benchmark package): child processes, private buses, app scopes, headless
        // compositors, a systemd user manager, a Mosquitto broker, samples. A target here and not a
        // dependency on that package, since a package fetched by URL may not depend on one by path. No
        // product, so nothing shipped reaches it.
        .target(name: "Harness", dependencies: ["DBus", "NotifyBus"], path: "Packages/Harness/Sources/Harness"),
        // The tests' conventions on the harness, umockdev test beds and the real daemons, for every test target.
        .target(
            name: "TestSupport",
            dependencies: [
                "NotifyBus", "NotifyBusSources", "DBus", .product(name: "Logging", package: "swift-log"),
                "Harness",
            ],
            path: "Tests/TestSupport", exclude: ["Fixtures"]),
        // The tests' own Wayland client, a C program (Tests/README.md, "phoc headless"): it follows
        // the toplevels, makes a virtual pointer (phoc's seat), activates, covers them with a layer
        // surface; and the interface descriptions of the two wlr protocols it speaks besides the
        // foreign-toplevel one (virtual pointer, layer shell).
        .target(name: "CWlrTestProtocols", dependencies: ["CWaylandClient"], path: "Tests/CWlrTestProtocols"),
        .executableTarget(
            name: "WaylandTestClient", dependencies: ["CWaylandClient", "CForeignToplevel", "CWlrTestProtocols"],
            path: "Tests/WaylandTestClient"),
        // Runs the power or display source in a child process under umockdev's LD_PRELOAD.
        .executableTarget(
            name: "PowerSupplyProbe",
            dependencies: [
                "NotifyBus", "NotifyBusSources", "Udev", "EpollLoop", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/PowerSupplyProbe"),
        .testTarget(name: "NotifyBusTests", dependencies: ["NotifyBus"]),
        .testTarget(name: "NotifyBusLogTests", dependencies: ["NotifyBus", "NotifyBusLog"], exclude: ["Fixtures"]),
        .testTarget(name: "EpollLoopTests", dependencies: ["EpollLoop"]),
        // The executor installed in a child process of its own (the hook is the process's, once):
        // tasks, sleeps, its threads, no idle wake-up.
        .executableTarget(name: "LoopExecutorProbe", dependencies: ["LoopExecutor"], path: "Tests/LoopExecutorProbe"),
        .testTarget(name: "LoopExecutorTests", dependencies: ["LoopExecutorProbe", "TestSupport"]),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "TestSupport", "EpollLoop"]),
        .testTarget(name: "SystemSupportTests", dependencies: ["SystemSupport", "EpollLoop", "TestSupport"]),
        .testTarget(
            name: "PowerSupplyTests",
            dependencies: [
                "NotifyBus", "NotifyBusSources", "PowerSupplyProbe", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        .testTarget(
            name: "DBusSourcesTests",
            dependencies: [
                "NotifyBus", "NotifyBusSources", "DBus", "TestSupport", "EpollLoop",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            exclude: ["Fixtures"]),
        // The sources' state machines, driven without a bus.
        .testTarget(name: "NotifyBusSourcesTests", dependencies: ["NotifyBus", "NotifyBusSources", "DBus"]),
        .testTarget(
            name: "NotifyWatchTests",
            dependencies: ["NotifyBus", "NotifyBusLog", "NotifyBusSources", "TestSupport", "notifywatch", "LiveAppExample"]),
        // The daemon's state machines; notifybusd in a child process with Python, Swift and
        // notifywatch clients; the real cgroup v2 freezer (root and a writable cgroup2 mount,
        // always so in CI).
        .testTarget(
            name: "NotifyBusDaemonTests",
            dependencies: [
                "NotifyBus", "NotifyBusDaemon", "NotifyBusProtocol", "NotifyBusClient", "DBus", "EpollLoop", "SystemSupport",
                "TestSupport",
                "notifybusd", "notifywatch", .product(name: "Logging", package: "swift-log"),
            ]),
        // notifywatch against the real iio-sensor-proxy, systemd-localed and xdg-desktop-portal;
        // notifywatch and notifybusd idle beside them.
        .testTarget(name: "RealDaemonTests", dependencies: ["NotifyBus", "TestSupport", "notifywatch", "notifybusd"]),
        // notifywatch suspended under a flood of uevents and D-Bus signals: memory and descriptors
        // flat, the flush the truth (NOTIFYBUS_SOAK_SECONDS long; scripts/soak runs it for minutes).
        .testTarget(name: "SoakTests", dependencies: ["NotifyBus", "DBus", "TestSupport", "notifywatch"]),
        // The link, notifybusd --mqtt and notifywatch --mqtt against a real Mosquitto broker
        // (Debian's mosquitto and mosquitto-clients), one broker per test on a free loopback port.
        .testTarget(
            name: "MQTTTests",
            dependencies: [
                "NotifyBus", "NotifyBusMQTT", "NotifyBusSources", "SystemSupport", "Mosquitto", "EpollLoop", "TestSupport",
                "notifybusd", "notifywatch",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OrderedCollections", package: "swift-collections"),
            ],
            exclude: ["Fixtures"]),
        // The lifecycle policy as a state machine; both window backends, the freezer and
        // notifybusd --freeze-background against a headless sway with foot windows in app scopes
        // of a private cgroup tree, a headless phoc driven by WaylandTestClient, and python-dbusmock
        // stand-ins of the systemd user manager, an MPRIS player and logind.
        .testTarget(
            name: "LifecycleTests",
            dependencies: [
                "NotifyBus", "NotifyBusLifecycle", "Wayland", "DBus", "EpollLoop", "SystemSupport", "TestSupport",
                "notifybusd", "notifywatch", "BackgroundTaskExample", "WaylandTestClient",
                .product(name: "Logging", package: "swift-log"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)

// Every Swift target: explicit existentials, imports that say what a file uses, and imports
// internal unless marked: a module whose public (or package) API names a lower module's types
// says so with `public import` (`package import`).
for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    target.swiftSettings = settings
}
