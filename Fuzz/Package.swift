// swift-tools-version: 6.1
import PackageDescription

// libFuzzer harnesses for the parsers, the D-Bus message decoding and the server's dispatch, in a package of their own so that `swift build` and
// `swift test` at the root never build them. `scripts/fuzz` builds them with
// `-sanitize=fuzzer,address -D NOTIFYBUS_LIBFUZZER`: each harness's entry point then hands
// its input function to libFuzzer's driver (`LLVMFuzzerRunDriver`); a plain
// `swift build --package-path Fuzz` builds each as a tool that runs the harness once per file
// named on its command line, to replay a crashing input without the sanitizers.
let package = Package(
    name: "NotifyBusFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "NotifyBus", path: "..")],
    targets: [
        // libFuzzer's driver entry point (declared only; `-sanitize=fuzzer` links it).
        .systemLibrary(name: "CLibFuzzer", path: "Sources/CLibFuzzer"),
        // What every harness shares: reporting a broken property, replaying files without libFuzzer.
        .target(name: "FuzzSupport", path: "Sources/FuzzSupport"),
        // Event logs, whole files: read (strict and skipping bad lines), then replayed.
        .executableTarget(
            name: "FuzzEventLog",
            dependencies: [
                .product(name: "NotifyBus", package: "NotifyBus"),
                .product(name: "NotifyBusLog", package: "NotifyBus"),
                "CLibFuzzer", "FuzzSupport",
            ],
            path: "Sources/FuzzEventLog",
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        // JSON text: parsed, printed and parsed again.
        .executableTarget(
            name: "FuzzJSONValue",
            dependencies: [.product(name: "NotifyBus", package: "NotifyBus"), "CLibFuzzer", "FuzzSupport"],
            path: "Sources/FuzzJSONValue",
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        // D-Bus messages in their wire form: demarshalled, every header field and argument read,
        // marshalled and read again.
        .executableTarget(
            name: "FuzzDBusMessage",
            dependencies: [.product(name: "DBus", package: "NotifyBus"), "CLibFuzzer", "FuzzSupport"],
            path: "Sources/FuzzDBusMessage",
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        // Method calls (wire bytes, or built from the bytes) dispatched by a service's tables:
        // the decision checked against the dispatch rules; no oversized body decoded, no
        // stranger reaching a subscription, no handler handed arguments of another signature.
        .executableTarget(
            name: "FuzzDBusDispatch",
            dependencies: [.product(name: "DBus", package: "NotifyBus"), "CLibFuzzer", "FuzzSupport"],
            path: "Sources/FuzzDBusDispatch",
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
    ],
    swiftLanguageModes: [.v6]
)

for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
