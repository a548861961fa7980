// The harness the tests share with the benchmarks (Packages/Harness: child processes, private
// buses, app scopes, headless compositors, a systemd user manager, a Mosquitto broker); every test
// target that imports TestSupport sees it.
@_exported import Harness

#if canImport(Glibc)
import Glibc
#endif

/// Where the tests' companions live.
public enum Paths {
    /// The directory of this target's fixtures: the umockdev test beds (`testbed.py` for
    /// power_supply devices, `iio_testbed.py` for IIO sensors under iio-sensor-proxy).
    public static let fixtures: String = {
        let file = "\(#filePath)"
        return String(file[..<(file.lastIndex(of: "/") ?? file.endIndex)]) + "/Fixtures"
    }()

    /// The directory of the running test bundle, where `swift build`/`swift test` also put the
    /// package's executables.
    public static let buildDirectory: String = {
        let exe = testExecutable
        return String(exe[..<(exe.lastIndex(of: "/") ?? exe.endIndex)])
    }()

    /// The running test bundle's own executable (`/proc/self/exe`).
    public static let testExecutable: String = {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        return n > 0 ? String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
    }()

    /// The package's executable `name`, built beside the test bundle.
    public static func executable(_ name: String) -> String {
        buildDirectory + "/" + name
    }

    /// The `notifybusd` the daemon's tests run: `$NOTIFYBUS_TEST_NOTIFYBUSD` when set (scripts/test
    /// sets it to a release build, the daemon users run, so that the bounds of answer time under a
    /// flood are the product's), else the one built beside the test bundle.
    public static let notifybusd: String = {
        if let path = getenv("NOTIFYBUS_TEST_NOTIFYBUSD").map({ String(cString: $0) }), !path.isEmpty { return path }
        return executable("notifybusd")
    }()

    /// umockdev's preload library, by its soname (found through the loader's path).
    public static let preload = "libumockdev-preload.so.0"
}
