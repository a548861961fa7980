public import DBus
public import Logging
public import NotifyBus
import SourceFramework

/// Every built-in source in one call, sharing one loop.
///
/// ```swift
/// import NotifyBus
/// import NotifyBusSources
///
/// let bus = NotificationBus()
/// let sources = SystemSources.all(bus: bus)      // power, sensors, locale, settings, …
/// try await withThrowingTaskGroup(of: Void.self) { group in
///     for source in sources { group.addTask { try await source.run() } }
///     …                                          // or run them in a ServiceGroup
/// }
/// ```
///
/// Each source runs wherever Linux does: a source without its hardware, daemon or bus reports
/// `unavailable` and keeps watching for it, so "every source that can run here" is every source.
public enum SystemSources {
    /// Every source's name, in the order `all(bus:options:)` returns them.
    public static let names = builtIns.map(\.name)

    /// Every built-in source, in order: its name (its configuration's `source.name`) and its
    /// configuration for the options, given what re-reads the other sources after a wake.
    private static let builtIns: [BuiltIn] = [
        BuiltIn { _, _ in PowerSupplyConfiguration() },
        BuiltIn { options, _ in SensorProxyConfiguration(address: options.systemBus) },
        BuiltIn { options, _ in LocaleConfiguration(address: options.systemBus) },
        BuiltIn { options, _ in PortalSettingsConfiguration(address: options.sessionBus) },
        BuiltIn { options, _ in TimeConfiguration(address: options.systemBus) },
        BuiltIn { _, _ in DisplayConfiguration() },
        BuiltIn { options, _ in PowerProfileConfiguration(address: options.systemBus) },
        BuiltIn { options, _ in NetworkConfiguration(address: options.systemBus) },
        BuiltIn { options, afterWake in
            LoginConfiguration(address: options.systemBus, onWake: { afterWake.rereadAll() })
        },
        BuiltIn { _, _ in MemoryPressureConfiguration() },
        BuiltIn { options, _ in ThermalConfiguration(address: options.systemBus) },
    ]

    /// A built-in source: its name, and how `all(bus:options:)` makes it.
    private struct BuiltIn: Sendable {
        let name: String
        let make: @Sendable (NotificationBus, SourceLoop, Options, WakeRereads) -> any NotifyBusSource

        init<Configuration: SystemSourceConfiguration>(
            _ configure: @escaping @Sendable (Options, WakeRereads) -> Configuration
        ) {
            name = Configuration.source.name
            make = { bus, loop, options, afterWake in
                SystemSource(bus: bus, loop: loop, configuration: configure(options, afterWake), logger: options.logger)
            }
        }
    }

    /// Which sources to make, and where the D-Bus ones connect.
    public struct Options: Sendable {
        /// The system bus (sensors, locale, time, power-profile, network, login, thermal).
        public var systemBus: DBusAddress
        /// The session bus (settings).
        public var sessionBus: DBusAddress
        /// Only these sources (by name); empty means all.
        public var only: [String]
        /// Not these sources (by name).
        public var except: [String]
        /// The logger every source logs to (each adds its name as the metadata `source`); `nil`
        /// gives each a logger labelled `notifybus.source.<name>`.
        public var logger: Logger?
        /// The loop the sources share; `nil`: one of their own, started with the first of them and
        /// stopped with the last (`SourceLoop.onDemand`). A program whose own work lives on an
        /// event loop gives that loop, so a published event reaches it without a thread hop.
        public var loop: SourceLoop?

        /// Creates the options.
        public init(
            systemBus: DBusAddress = .system, sessionBus: DBusAddress = .session,
            only: [String] = [], except: [String] = [], logger: Logger? = nil, loop: SourceLoop? = nil
        ) {
            self.systemBus = systemBus
            self.sessionBus = sessionBus
            self.only = only
            self.except = except
            self.logger = logger
            self.loop = loop
        }

        /// Whether the source named `name` is chosen.
        public func includes(_ name: String) -> Bool {
            (only.isEmpty || only.contains(name)) && !except.contains(name)
        }
    }

    /// The chosen sources, in the order of `names`, publishing to `bus` and sharing one loop that
    /// starts when the first of them runs and stops when the last one returns. Names that are
    /// no source's are ignored. After a wake (the `login` source's `PrepareForSleep(false)`),
    /// every other source re-reads, as after `fg`.
    public static func all(bus: NotificationBus, options: Options = Options()) -> [any NotifyBusSource] {
        let loop = options.loop ?? SourceLoop.onDemand(name: "notifybus-sources")
        let afterWake = WakeRereads()
        let sources = builtIns.filter { options.includes($0.name) }.map { $0.make(bus, loop, options, afterWake) }
        afterWake.sources = sources.filter { $0.name != LoginConfiguration.source.name }
        return sources
    }
}
