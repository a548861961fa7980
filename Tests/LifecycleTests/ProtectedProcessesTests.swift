import DBus
import EpollLoop
import Logging
@testable import NotifyBusLifecycle
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `ProtectedProcesses` on a loop of its own with its own connection to a private session bus,
/// made before the connection connects; what it reports is recorded.
final class RunningProtectedProcesses: Sendable {
    let reports = Recorder<Set<Int32>>()
    let log = LogRecorder()
    private let running: ConnectedOnLoop<ProtectedProcesses>

    /// Made before the connection connects, or, `onConnected`, on a connection registered on the
    /// bus already.
    init(bus: PrivateBus, onConnected: Bool = false) async throws {
        let (reports, logger) = (reports, log.logger)
        running = try await ConnectedOnLoop(name: "protected-processes", bus: bus, onConnected: onConnected) { connection in
            ProtectedProcesses(connection: connection, logger: logger) { reports.append($0) }
        }
    }

    /// Waits until the set last reported is `expected`.
    func waitFor(_ expected: Set<Int32>, timeout: Duration = patience) async -> Bool {
        await reports.wait(timeout: timeout) { ($0.last ?? []) == expected }
    }

    func stop() async { await running.stop() }
}

/// The process of the `dbus-daemon` of `bus`, found in /proc by its configuration file.
func busDaemonProcess(_ bus: PrivateBus) throws -> Int32 {
    let option = "--config-file=\(bus.directory)/bus.conf"
    guard let directory = opendir("/proc") else { throw HarnessError("cannot read /proc") }
    defer { closedir(directory) }
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard let pid = Int32(name), let commandLine = readFile("/proc/\(pid)/cmdline") else { continue }
        if commandLine.split(separator: "\0").contains(where: { $0 == option }) { return pid }
    }
    throw HarnessError("no dbus-daemon with \(option)")
}

/// ProtectedProcesses against python-dbusmock services owning the protected names on a private
/// session bus.
@Suite("ProtectedProcesses with python-dbusmock services", .serialized)
struct ProtectedProcessesTests {
    let bus: PrivateBus

    init() async throws {
        bus = try PrivateBus(.session)
    }

    func startPortal() async throws -> DBusMockProcess {
        try await DBusMockProcess(
            bus: bus, name: "org.freedesktop.portal.Desktop", path: "/org/freedesktop/portal/desktop",
            interface: "org.freedesktop.portal.Settings")
    }

    func startSecrets() async throws -> DBusMockProcess {
        try await DBusMockProcess(
            bus: bus, name: "org.freedesktop.secrets", path: "/org/freedesktop/secrets",
            interface: "org.freedesktop.Secret.Service")
    }

    func startAccessibilityBus() async throws -> DBusMockProcess {
        try await DBusMockProcess(bus: bus, name: "org.a11y.Bus", path: "/org/a11y/bus", interface: "org.a11y.Bus")
    }

    func startNotifications() async throws -> MockService {
        try await MockService(bus: bus, template: "notification_daemon", name: "org.freedesktop.Notifications")
    }

    @Test func theBusDaemonAndTheOwnersAreProtectedAndOneLeaving() async throws {
        let daemon = try busDaemonProcess(bus)
        let protected = try await RunningProtectedProcesses(bus: bus)
        #expect(await protected.waitFor([daemon]))
        let portal = try await startPortal()
        let secrets = try await startSecrets()
        let accessibility = try await startAccessibilityBus()
        let notifications = try await startNotifications()
        #expect(await protected.waitFor([daemon, portal.pid, secrets.pid, accessibility.pid, notifications.process.pid]))
        try await notifications.stop()
        #expect(await protected.waitFor([daemon, portal.pid, secrets.pid, accessibility.pid]))
        // Another owner of the name.
        let next = try await startNotifications()
        #expect(await protected.waitFor([daemon, portal.pid, secrets.pid, accessibility.pid, next.process.pid]))
        portal.process.terminate(signal: SIGKILL)
        #expect(await protected.waitFor([daemon, secrets.pid, accessibility.pid, next.process.pid]))
        #expect(protected.log.recent.isEmpty)
        await protected.stop()
        try await next.stop()
        try await secrets.stop()
        try await accessibility.stop()
    }

    @Test func ownersThereBeforeItStartsAreProtected() async throws {
        let daemon = try busDaemonProcess(bus)
        let secrets = try await startSecrets()
        let notifications = try await startNotifications()
        let protected = try await RunningProtectedProcesses(bus: bus)
        #expect(await protected.waitFor([daemon, secrets.pid, notifications.process.pid]))
        await protected.stop()
        // Also on a connection registered on the bus already.
        let onConnected = try await RunningProtectedProcesses(bus: bus, onConnected: true)
        #expect(await onConnected.waitFor([daemon, secrets.pid, notifications.process.pid]))
        await onConnected.stop()
        try await secrets.stop()
        try await notifications.stop()
    }

    @Test func anOwnerChangeDropsTheOldProcessAtOnceAndStaleAnswersAreIgnored() {
        var state = ProtectedProcesses.State()
        let first = state.ownerChanged("org.freedesktop.secrets", to: ":1.4")!
        state.processLookedUp(first, processID: 40)
        #expect(state.processes == [40])
        // The same owner again (a reconnection): its process stays until the new answer.
        let again = state.ownerChanged("org.freedesktop.secrets", to: ":1.4")!
        #expect(state.processes == [40])
        state.processLookedUp(first, processID: 99)
        #expect(state.processes == [40])
        state.processLookedUp(again, processID: 41)
        #expect(state.processes == [41])
        // Another owner: the old process goes at once.
        let other = state.ownerChanged("org.freedesktop.secrets", to: ":1.9")!
        #expect(state.processes.isEmpty)
        state.processLookedUp(other, processID: nil)
        #expect(state.processes.isEmpty)
        #expect(state.ownerChanged("org.freedesktop.secrets", to: nil) == nil)
        #expect(state.processes.isEmpty)
        // The bus daemon's process is one more entry; a PID of 0 is none.
        let bus = state.ownerChanged(.bus, to: .bus)!
        state.processLookedUp(bus, processID: 0)
        #expect(state.processes.isEmpty)
    }
}
