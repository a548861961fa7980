import Harness

#if canImport(Glibc)
import Glibc
#endif

/// The REAL iio-sensor-proxy (Debian's /usr/sbin/iio-sensor-proxy) on umockdev IIO devices
/// (Fixtures/iio_testbed.py, Tests/README.md, "iio-sensor-proxy on umockdev"), on a private system
/// bus. Only the test bed and the daemon run under umockdev's preload; the bus and the test process
/// do not.
public final class IIOTestbed: Sendable {
    let process: ChildProcess

    public init(bus: PrivateBus) throws {
        process = try ChildProcess(
            executable: "/usr/bin/python3", arguments: [Paths.fixtures + "/iio_testbed.py"],
            environment: bus.environment(extra: [
                "LD_PRELOAD": "libumockdev-preload.so.0", "UMOCKDEV_DIR": nil,
                "IIO_PROXY_LOG": bus.directory + "/iio-sensor-proxy.log", "PYTHONDONTWRITEBYTECODE": "1",
            ]),
            standardError: .append(bus.directory + "/iio_testbed.log"))
        guard let line = process.readLine(timeout: .seconds(20)), line.contains("root") else {
            throw HarnessError("iio_testbed.py did not start")
        }
    }

    deinit {
        process.send(#"{"op": "quit"}"#)
        process.waitForExit(timeout: .seconds(10))
    }

    func request(_ json: String) throws {
        let answer = try process.request(json)
        guard answer.contains("\"ok\": true") else { throw HarnessError("iio_testbed.py: \(answer)") }
    }

    /// Adds `accel`, `proximity` or `als` (with the values of iio_testbed.py's DEVICES).
    public func add(_ name: String) throws { try request(#"{"op": "add", "name": "\#(name)"}"#) }
    /// Starts iio-sensor-proxy (without waiting for its name).
    public func start() throws { try request(#"{"op": "start"}"#) }
    /// Stops iio-sensor-proxy (SIGTERM) and waits for it to exit.
    public func stop() throws { try request(#"{"op": "stop"}"#) }

    /// Writes sysfs attributes of a device; the daemon's poll drivers re-read them (~700 ms).
    public func set(_ name: String, _ attributes: [String: String]) throws {
        let members = attributes.map { "\"\($0.key)\": \"\($0.value)\"" }.joined(separator: ", ")
        try request(#"{"op": "set", "name": "\#(name)", "attributes": {\#(members)}}"#)
    }

    /// Tilts the accelerometer so that `raw` (an `AccelerometerOrientation`) is what the daemon
    /// reads: `left-up`, `right-up`, `bottom-up`, anything else is `normal`.
    public func orient(_ raw: String) throws {
        let (x, y) = switch raw {
        case "left-up": ("1000", "0")
        case "right-up": ("-1000", "0")
        case "bottom-up": ("0", "1000")
        default: ("0", "-1000")
        }
        try set("accel", ["in_accel_x_raw": x, "in_accel_y_raw": y])
    }
}
