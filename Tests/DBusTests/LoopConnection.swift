import DBus
import EpollLoop
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A `DBusConnection` on a loop of its own, set up by `setup` on the loop before it connects,
/// for tests that need the connection itself (exports, its loop held still).
final class LoopConnection: Sendable {
    let loop: EventLoopThread
    let key = LoopLocalKey<DBusConnection>()

    convenience init(
        bus: PrivateBus, configuration: DBusConnection.Configuration = .init(),
        setup: @escaping @Sendable (DBusConnection) -> Void = { _ in }
    ) async throws {
        try await self.init(bus: bus, configuration: configuration) { connection, _ in setup(connection) }
    }

    /// `setup` also gets the loop's context, for state kept on the loop.
    init(
        bus: PrivateBus, configuration: DBusConnection.Configuration = .init(),
        setup: @escaping @Sendable (DBusConnection, LoopContext) -> Void
    ) async throws {
        loop = try EventLoopThread(name: "loop-connection")
        let key = self.key
        let address = bus.dbusAddress
        try await loop.submit { context in
            let connection = DBusConnection(address: address, context: context, configuration: configuration)
            context[local: key] = connection
            setup(connection, context)
            connection.connect()
        }
    }

    /// Runs `body` with the loop's context.
    func runInContext<R: Sendable>(_ body: @escaping @Sendable (LoopContext) -> R) async throws -> R {
        try await loop.submit { context in body(context) }
    }

    /// Runs `body` with the connection on its loop.
    func run<R: Sendable>(_ body: @escaping @Sendable (DBusConnection) -> R) async throws -> R {
        let key = self.key
        return try await loop.submit { context in body(context[local: key]!) }
    }

    /// Runs `body` with the connection on its loop and awaits what it hands `done`.
    func await<R: Sendable>(
        _ body: @escaping @Sendable (DBusConnection, @escaping @Sendable (Result<R, DBusError>) -> Void) -> Void
    ) async throws -> R {
        let key = self.key
        return try await withCheckedThrowingContinuation { continuation in
            do {
                try loop.execute { context in body(context[local: key]!) { continuation.resume(with: $0) } }
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    /// Waits until registered on the bus; returns the unique name.
    func uniqueName() async throws -> BusName {
        for _ in 0..<500 {
            if let name = try await run({ $0.uniqueName }) { return name }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw HarnessError("the connection did not register on the bus")
    }

    /// Owns `name` on the bus.
    func requestName(_ name: BusName) async throws -> DBusConnection.NameRequestResult {
        _ = try await uniqueName()
        return try await self.await { connection, done in connection.requestName(name, reply: done) }
    }

    func close() async {
        let key = self.key
        _ = try? await loop.submit { context in context[local: key]?.close() }
        await loop.shutdown()
    }
}

/// Runs `/usr/bin/python3 -c script arguments…` with dbus-python and returns what it printed
/// on standard output, line by line.
func runPython(_ script: String, _ arguments: [String], bus: PrivateBus, timeout: Duration = .seconds(60)) throws -> [String] {
    let path = try makeTemporaryFile("notifybus-script")
    defer { unlink(path) }
    try writeFile(path, script)
    let child = try ChildProcess(
        executable: "/usr/bin/python3", arguments: [path] + arguments,
        environment: bus.environment(extra: ["PYTHONDONTWRITEBYTECODE": "1"]),
        standardError: .append("\(bus.directory)/python.log"))
    var lines: [String] = []
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline, let line = child.readLine(timeout: deadline - ContinuousClock.now) {
        lines.append(line)
    }
    guard child.waitForExit(timeout: .seconds(10)) == 0 else {
        throw HarnessError("python failed: \(readFile("\(bus.directory)/python.log") ?? "")")
    }
    return lines
}

/// This process's resident set, and its peak since `resetPeakResidentSize()`, in bytes
/// (`VmRSS`, `VmHWM` of `/proc/self/status`).
func residentSizes() -> (current: Int, peak: Int) {
    let status = readFile("/proc/self/status") ?? ""
    func field(_ name: String) -> Int {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return 0 }
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }
    return (field("VmRSS"), field("VmHWM"))
}

/// Sets the peak resident size (`VmHWM`) back to the current one (`/proc/self/clear_refs` 5).
func resetPeakResidentSize() {
    let fd = open("/proc/self/clear_refs", O_WRONLY)
    guard fd >= 0 else { return }
    _ = write(fd, "5", 1)
    close(fd)
}

/// Fixes glibc's mmap threshold at 128 KiB, as notifybusd does (`HeapMemory.mapBlocks(ofAtLeast:)`):
/// receiving a 30 MB message then peaks near twice its size (the read buffer and the message's
/// own copy of its body), not three times.
func fixMmapThreshold() {
    HeapMemory.mapBlocks(ofAtLeast: 128 * 1024)
}
