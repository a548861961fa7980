import Harness

#if canImport(Glibc)
import Glibc
#endif

/// Runs `script` with python-dbus (`/usr/bin/python3`), where `bus` is a connection to the bus at
/// `address`: for tests that drive a python-dbusmock stand-in without a D-Bus client of their own.
/// - Throws: `HarnessError` when the script fails or does not end within `patience`.
public func runPythonDBus(address: String, _ script: String) throws {
    let process = try ChildProcess(
        executable: "/usr/bin/python3",
        arguments: ["-c", "import dbus\nbus = dbus.bus.BusConnection('\(address)')\n" + script],
        environment: ChildProcess.environment(with: [:]))
    process.closeInput()
    guard let status = process.waitForExit(timeout: patience), ChildProcess.exitStatus(ofWaitStatus: status) == 0 else {
        throw HarnessError("python-dbus script failed: \(script)")
    }
}
