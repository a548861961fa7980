import Harness
import DBus
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The REAL xdg-desktop-portal with its GTK backend and dconf, headless, on a private session bus
/// (Tests/README.md, "The portal, headless"): `dconf-service`, then `Xvfb` (xdg-desktop-portal-gtk
/// needs a display), then `/usr/libexec/xdg-desktop-portal-gtk`, then
/// `/usr/libexec/xdg-desktop-portal`, each waited for (its bus name, or Xvfb's display number)
/// before the next.
///
/// Everything runs with a throw-away `HOME`, `XDG_CONFIG_HOME` (the dconf database) and
/// `XDG_RUNTIME_DIR` under the bus's directory, `XDG_CURRENT_DESKTOP=GNOME` (the GTK backend is
/// used in GNOME) and `GSETTINGS_BACKEND=dconf`; `gsettings(_:)` runs `gsettings` the same way,
/// so its writes go through this dconf-service and reach the portal. Stopped in reverse order on
/// `deinit` (the bus's own `deinit` then removes the directory).
public final class RealPortal: Sendable {
    public static let name = "org.freedesktop.portal.Desktop"

    /// The private session bus.
    public let bus: PrivateBus
    /// The environment of the daemons and of `gsettings`.
    public let environment: [String: String]
    /// Xvfb's display, e.g. `:1`.
    public let display: String
    private let processes: Mutex<[ChildProcess]>

    public init() async throws {
        let bus = try PrivateBus(.session)
        self.bus = bus
        let root = bus.directory
        for directory in ["home", "config", "runtime"] { mkdir(root + "/" + directory, 0o700) }
        var environment = bus.environment(extra: [
            "HOME": root + "/home", "XDG_CONFIG_HOME": root + "/config", "XDG_RUNTIME_DIR": root + "/runtime",
            "XDG_CURRENT_DESKTOP": "GNOME", "GSETTINGS_BACKEND": "dconf", "DISPLAY": nil, "WAYLAND_DISPLAY": nil,
            "XDG_DATA_HOME": root + "/home/.local/share", "XDG_CACHE_HOME": root + "/home/.cache",
            "GIO_USE_VFS": "local", "NO_AT_BRIDGE": "1", "GTK_A11Y": "none",
        ])
        var started: [ChildProcess] = []
        do {
            started.append(try ChildProcess("/usr/libexec/dconf-service", [], environment: environment, log: root + "/dconf-service.log"))
            try await bus.waitForOwner(of: "ca.desrt.dconf")
            let (xvfb, display) = try Self.startXvfb(environment: environment, log: root + "/xvfb.log")
            started.append(xvfb)
            environment["DISPLAY"] = display
            started.append(try ChildProcess(
                "/usr/libexec/xdg-desktop-portal-gtk", [], environment: environment, log: root + "/xdg-desktop-portal-gtk.log"))
            try await bus.waitForOwner(of: "org.freedesktop.impl.portal.desktop.gtk")
            started.append(try ChildProcess(
                "/usr/libexec/xdg-desktop-portal", [], environment: environment, log: root + "/xdg-desktop-portal.log"))
            try await bus.waitForOwner(of: Self.name)
            self.display = display
        } catch {
            for process in started.reversed() { process.terminate() }
            throw error
        }
        self.environment = environment
        processes = Mutex(started)
    }

    deinit {
        for process in processes.withLock({ $0 }).reversed() { process.terminate() }
    }

    /// Runs `gsettings arguments` against this dconf (e.g. `set org.gnome.desktop.interface
    /// color-scheme prefer-dark`); returns its output.
    @discardableResult
    public func gsettings(_ arguments: [String]) async throws -> String {
        try await runCommand("/usr/bin/gsettings", arguments, environment: environment)
    }

    /// The contents of the daemons' logs, for failure messages.
    public var logs: String {
        ["dconf-service", "xvfb", "xdg-desktop-portal-gtk", "xdg-desktop-portal"].map { name in
            "== \(name)\n" + (readFile("\(bus.directory)/\(name).log") ?? "")
        }.joined(separator: "\n")
    }

    /// Starts `Xvfb -displayfd 3` and reads the display number it reports there.
    private static func startXvfb(environment: [String: String], log: String) throws -> (ChildProcess, String) {
        let (xvfb, number) = try ChildProcess.start(
            "/usr/bin/Xvfb", ["-displayfd", "3", "-nolisten", "tcp", "-screen", "0", "640x480x24"],
            environment: environment, log: log, reportingOn: 3, timeout: .seconds(20))
        return (xvfb, ":" + number)
    }
}
