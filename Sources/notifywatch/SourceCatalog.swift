import Logging
import NotifyBus
import NotifyBusCommandLine
import NotifyBusSources

/// The built-in sources notifywatch can run, by name, and what its help says of them and of
/// the buses they connect to.
enum SourceCatalog: SourceSelectionHelp, BusAddressHelp {
    /// Every source name, in the order they are started and listed.
    static let sourceNames = SystemSources.names
    static let systemBus = "D-Bus system bus address (default: $DBUS_SYSTEM_BUS_ADDRESS)."
    static let sessionBus = "D-Bus session bus address (default: $DBUS_SESSION_BUS_ADDRESS)."

    /// Makes the named sources, publishing to `bus` and logging to `logger`, sharing one loop.
    static func make(
        _ names: [String], bus: NotificationBus, buses: BusAddressOptions<Self>, logger: Logger
    ) -> [any NotifyBusSource] {
        SystemSources.all(bus: bus, options: SystemSources.Options(
            systemBus: buses.system, sessionBus: buses.session,
            except: SystemSources.names.filter { !names.contains($0) }, logger: logger))
    }
}
