import DBus
import NotifyBus

// What makes each built-in configuration (or, for the udev sources, reading) the
// configuration of its source: the source's name, keys and watcher, and the default
// configuration. Each source's name is written here only; `SystemSources` lists them in order.

extension PowerSupplyReading: UdevSourceReading {
    /// The power source: `"power"`, publishing `battery/*/state`, `battery/*/level` and
    /// `power/*/online`.
    public static let source = SystemSourceDefinition<PowerSupplyConfiguration>(
        name: "power", keyPatterns: ["battery/*/state", "battery/*/level", "power/*/online"],
        watcher: UdevSubsystemWatcher<Self>.self)
}

extension SensorProxyConfiguration: SystemSourceConfiguration, DBusSourceConfiguration {
    /// The sensors source: `"sensors"`, publishing `orientation`, `proximity` and `light`.
    public static let source = SystemSourceDefinition<Self>(
        name: "sensors", keyPatterns: ["orientation", "proximity", "light"], watcher: SensorProxyWatcher.self)

    /// The default configuration.
    public init() { self.init(address: .system) }
}

extension LocaleConfiguration: SystemSourceConfiguration, DBusSourceConfiguration {
    /// The locale source: `"locale"`, publishing `locale`.
    public static let source = SystemSourceDefinition<Self>(
        name: "locale", keyPatterns: ["locale"], problemKey: "locale", watcher: LocaleWatcher.self)

    /// The default configuration.
    public init() { self.init(address: .system) }
}

extension PortalSettingsConfiguration: SystemSourceConfiguration, DBusSourceConfiguration {
    /// The settings source: `"settings"`, publishing `settings/**`.
    public static let source = SystemSourceDefinition<Self>(
        name: "settings", keyPatterns: ["settings/**"], watcher: PortalSettingsWatcher.self)

    /// The default configuration.
    public init() { self.init(address: .session) }
}

extension TimeConfiguration: SystemSourceConfiguration, DBusSourceConfiguration {
    /// The time source: `"time"`, publishing `time/zone`, `time/utc-offset` and `time/date`.
    public static let source = SystemSourceDefinition<Self>(
        name: "time", keyPatterns: ["time/zone", "time/utc-offset", "time/date"], watcher: TimeWatcher.self)

    /// The default configuration.
    public init() { self.init(address: .system) }
}

extension BacklightReading: UdevSourceReading {
    /// The display source: `"display"`, publishing `display/*/brightness`.
    public static let source = SystemSourceDefinition<DisplayConfiguration>(
        name: "display", keyPatterns: ["display/*/brightness"], watcher: UdevSubsystemWatcher<Self>.self)
}

extension PowerProfileConfiguration: SystemSourceConfiguration, DBusSourceConfiguration {
    /// The power-profile source: `"power-profile"`, publishing `power/profile`.
    public static let source = SystemSourceDefinition<Self>(
        name: "power-profile", keyPatterns: ["power/profile"], problemKey: "power/profile", watcher: PowerProfileWatcher.self)

    /// The default configuration.
    public init() { self.init(address: .system) }
}

extension NetworkConfiguration: SystemSourceConfiguration, DBusSourceConfiguration {
    /// The network source: `"network"`, publishing `network/connectivity` and `network/metered`.
    public static let source = SystemSourceDefinition<Self>(
        name: "network", keyPatterns: ["network/connectivity", "network/metered"], watcher: NetworkWatcher.self)

    /// The default configuration.
    public init() { self.init(address: .system) }
}

extension LoginConfiguration: SystemSourceConfiguration, DBusSourceConfiguration {
    /// The login source: `"login"`, publishing `system/sleep` and `session/locked`.
    public static let source = SystemSourceDefinition<Self>(
        name: "login", keyPatterns: ["system/sleep", "session/locked"], watcher: LoginWatcher.self)

    /// The default configuration.
    public init() { self.init(address: .system) }
}

extension MemoryPressureConfiguration: SystemSourceConfiguration {
    /// The memory source: `"memory"`, publishing `memory/pressure`.
    public static let source = SystemSourceDefinition<Self>(
        name: "memory", keyPatterns: ["memory/pressure"], problemKey: "memory/pressure", watcher: MemoryPressureWatcher.self)
}

extension ThermalConfiguration: SystemSourceConfiguration, DBusSourceConfiguration {
    /// The thermal source: `"thermal"`, publishing `thermal/state`.
    public static let source = SystemSourceDefinition<Self>(
        name: "thermal", keyPatterns: ["thermal/state"], problemKey: "thermal/state", watcher: ThermalWatcher.self)

    /// The default configuration.
    public init() { self.init(address: .system) }
}
