import DBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `scripts/install` and the files it installs: the D-Bus session service file starts notifybusd
/// on the first call to org.notifybus.Bus1.
@Suite("Installing notifybusd")
struct InstallTests {
    @Test func theInstalledServiceFileActivatesTheDaemon() async throws {
        let prefix = try makeTemporaryDirectory("notifybus-install")
        defer { removeTree(prefix) }
        let script = Paths.fixtures + "/../../../scripts/install"
        _ = try await runCommand(
            "/bin/bash", [script, "--prefix", prefix, "--build-dir", Paths.buildDirectory],
            environment: ChildProcess.environment(with: [:]), timeout: .seconds(120))
        for file in [
            "bin/notifybusd", "bin/notifywatch", "lib/systemd/user/notifybusd.service",
            "share/bash-completion/completions/notifywatch", "share/zsh/site-functions/_notifybusd",
            "share/fish/vendor_completions.d/notifywatch.fish",
        ] {
            #expect(access("\(prefix)/\(file)", F_OK) == 0, "\(file) is missing")
        }
        // The test build loads the Swift runtime from the toolchain, whose backtracer it finds there.
        #expect(access("\(prefix)/libexec/swift/linux/swift-backtrace", F_OK) != 0)
        let unit = try #require(readFile("\(prefix)/lib/systemd/user/notifybusd.service"))
        #expect(unit.contains("Type=dbus") && unit.contains("BusName=org.notifybus.Bus1"))
        #expect(unit.contains("ExecStart=\(prefix)/bin/notifybusd"))
        let service = try #require(readFile("\(prefix)/share/dbus-1/services/org.notifybus.Bus1.service"))
        #expect(service.contains("Exec=\(prefix)/bin/notifybusd"))
        // KWin's permission for the window list: the binary alone as Exec=, the interface listed.
        let desktop = try #require(readFile("\(prefix)/share/applications/org.notifybus.notifybusd.desktop"))
        #expect(desktop.split(separator: "\n").contains("Exec=\(prefix)/bin/notifybusd"))
        #expect(desktop.split(separator: "\n").contains("X-KDE-Wayland-Interfaces=org_kde_plasma_window_management"))
        #expect(desktop.split(separator: "\n").contains("NoDisplay=true"))

        // Activation on a private session bus that reads the installed file.
        let bus = try PrivateBus(.session)
        try writeFile("\(bus.directory)/services/org.notifybus.Bus1.service", service)
        let client = try DBusClient(address: bus.dbusAddress)
        try await client.waitUntilConnected()
        _ = try await client.call(destination: .bus, path: .bus, interface: .bus, member: "ReloadConfig")
        let version = try await client.property(
            destination: "org.notifybus.Bus1", path: "/org/notifybus/Bus1", interface: "org.notifybus.Bus1", name: "Version",
            timeout: .seconds(30))
        #expect(version == .uint32(2))
        let owner = try await client.call(destination: .bus, path: .bus, interface: .bus, member: "GetNameOwner", arguments: [.string("org.notifybus.Bus1")])
        let pid = try await client.call(destination: .bus, path: .bus, interface: .bus, member: "GetConnectionUnixProcessID", arguments: owner)
        if case .uint32(let daemon)? = pid.first { kill(pid_t(daemon), SIGTERM) }
        try await bus.waitForNoOwner(of: "org.notifybus.Bus1")
        await client.close()
    }
}
