import Logging
import NotifyBus
import DBus
import NotifyBusSources

/// The built-in sources notifywatch can run, by name.
enum SourceCatalog {
    /// Where the D-Bus sources connect; `nil` means the standard environment variables.
    struct Buses {
        var system: String?
        var session: String?
    }

    /// Every source name, in the order they are started and listed.
    static let names = SystemSources.names

    /// Makes the named sources, publishing to `bus` and logging to `logger`, sharing one loop.
    static func make(_ names: [String], bus: NotificationBus, buses: Buses, logger: Logger) -> [any NotifyBusSource] {
        SystemSources.all(bus: bus, options: SystemSources.Options(
            systemBus: buses.system.map(DBusAddress.address) ?? .system,
            sessionBus: buses.session.map(DBusAddress.address) ?? .session,
            except: SystemSources.names.filter { !names.contains($0) }, logger: logger))
    }

    /// The sources chosen by `--source` (only these) and `--no-source` (all but these).
    static func select(only: [String], except: [String]) throws -> [String] {
        for name in only + except where !names.contains(name) {
            throw CLIError("unknown source \"\(name)\" (the sources are: \(names.joined(separator: ", ")))")
        }
        return names.filter { (only.isEmpty || only.contains($0)) && !except.contains($0) }
    }
}

/// An error the CLI reports in words and exits non-zero.
struct CLIError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
