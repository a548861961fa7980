// swift-tools-version: 6.1
import PackageDescription

// One child-process type for the tests (Tests/TestSupport) and the benchmark packages
// (Benchmarks/*): a program started with posix_spawn, talked to over its standard input and
// output or writing to files, waited for and signalled; and what /proc says about a process.
// Linux only; no dependencies beyond Glibc and Synchronization. Nothing that scripts/install
// or the Debian package ships depends on it.
let package = Package(
    name: "ChildProcess",
    products: [
        .library(name: "ChildProcess", targets: ["ChildProcess"]),
    ],
    targets: [
        .target(name: "ChildProcess"),
    ],
    swiftLanguageModes: [.v6]
)
